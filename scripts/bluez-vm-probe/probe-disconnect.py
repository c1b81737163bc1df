#!/usr/bin/python3 -u
# Third probe of the real bluetoothd 5.66 for the BlueZ simulator: the order
# and timing of a local Disconnect() (its reply against ServicesResolved and
# Connected turning false), with and without a notification session, and a
# read in between. Writes under argv[1]: probe3.log (calls, with the time
# each reply arrived) and signals3.log (every signal from org.bluez).
from probelib import CH, DEV, DV, call, connect, find, o, open_logs, p, prop, spin, start


def device_changed(member, path, args):
    if path.endswith("dev_00_AA_01_01_00_01") and member == "PropertiesChanged":
        p("SIGNAL", str(args)[:200])


open_logs("probe3.log", "signals3.log", device_changed)

find()
chars = connect()
call("notify", chars["2a37"], CH, "StartNotify")
spin(2)
p("--- Disconnect with a notification session, reading 2a38 every 0.25 s meanwhile")
d = start("disconnect-1", DEV, DV, "Disconnect")
reads = 0
while "r" not in d and reads < 40:
    call(f"read-during-disconnect-{reads}", chars["2a38"], CH, "ReadValue", o({}), timeout=5)
    reads += 1
    spin(0.25)
spin(3)
p("Connected", prop(DEV, DV, "Connected"), "ServicesResolved", prop(DEV, DV, "ServicesResolved"))
spin(1)
chars = connect()
p("--- Disconnect without notification sessions")
call("disconnect-2", DEV, DV, "Disconnect")
spin(3)
p("Connected", prop(DEV, DV, "Connected"))
p("done")
