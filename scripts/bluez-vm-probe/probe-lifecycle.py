#!/usr/bin/python3 -u
# Second probe of the real bluetoothd 5.66 for the BlueZ simulator: notify
# twice, a write request on a read-only value, RemoveDevice while connected,
# a trusted discovered device across a power-off. Writes under argv[1].
import dbus

from probelib import AD, CH, DEV, DV, A, call, connect, find, managed, o, open_logs, p, prop, spin

open_logs("probe2.log", "signals2.log")
find()
call("trust", DEV, "org.freedesktop.DBus.Properties", "Set", DV, "Trusted", dbus.Boolean(True))
chars = connect()
call("notify1", chars["2a37"], CH, "StartNotify")
spin(2)
call("notify2-after-2s", chars["2a37"], CH, "StartNotify")
call(
    "write-request-readonly",
    chars["2a38"],
    CH,
    "WriteValue",
    dbus.Array([dbus.Byte(1)], signature="y"),
    o({"type": "request"}),
)
call(
    "write-command-offset",
    chars["2a39"],
    CH,
    "WriteValue",
    dbus.Array([dbus.Byte(1)], signature="y"),
    o({"type": "command", "offset": dbus.UInt16(1)}),
)
call("read-after-connect-mtu", chars["2a38"], CH, "ReadValue", o({}))
p("MTU", prop(chars["2a38"], CH, "MTU"))
call("remove-connected", A, AD, "RemoveDevice", dbus.ObjectPath(DEV))
spin(3)
p("after remove", DEV in managed())
find()
call("trust2", DEV, "org.freedesktop.DBus.Properties", "Set", DV, "Trusted", dbus.Boolean(True))
call("power-off", A, "org.freedesktop.DBus.Properties", "Set", AD, "Powered", dbus.Boolean(False))
spin(2)
p("trusted device after power off", DEV in managed())
call("connect-while-off", DEV, DV, "Connect")
call("pair-while-off", DEV, DV, "Pair")
call("disconnect-while-off", DEV, DV, "Disconnect")
call("power-on", A, "org.freedesktop.DBus.Properties", "Set", AD, "Powered", dbus.Boolean(True))
spin(1)
p("done")
