#!/usr/bin/python3 -u
# A GATT application for the acquire probe, registered on hci1 beside
# BlueZ's example server: a characteristic that notifies bursts on request
# (each value: u32 sequence number, u64 CLOCK_MONOTONIC ns at sending; the
# central in the same guest reads the same clock), takes writes without
# response (logged with their options), and an indicate-only one.
#   fast-peripheral.py LOGFILE
import struct
import sys
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
log = open(sys.argv[1], "w")


def p(*a):
    log.write(f"{time.monotonic():.6f} " + " ".join(str(x) for x in a) + "\n")
    log.flush()


ROOT = "/org/blegateway/fast"
SVC = ROOT + "/service0"
CHRC = "org.bluez.GattCharacteristic1"
PROPS = "org.freedesktop.DBus.Properties"


class Service(dbus.service.Object):
    def __init__(self):
        dbus.service.Object.__init__(self, bus, SVC)

    def props(self):
        return {"org.bluez.GattService1": {"UUID": "f00d0000-0000-4000-8000-00000000f00d", "Primary": True}}


class Characteristic(dbus.service.Object):
    def __init__(self, index, uuid, flags):
        self.path = SVC + f"/char{index}"
        self.uuid, self.flags, self.notifying = uuid, flags, False
        dbus.service.Object.__init__(self, bus, self.path)

    def props(self):
        return {
            CHRC: {"Service": dbus.ObjectPath(SVC), "UUID": self.uuid, "Flags": dbus.Array(self.flags, signature="s")}
        }

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.props()[CHRC]

    @dbus.service.method(CHRC, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        return dbus.Array([0], signature="y")

    @dbus.service.method(CHRC, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        kind = str(options.get("type", ""))
        p("WRITE", self.uuid[4:8], bytes(value).hex(), "type", kind, "mtu", int(options.get("mtu", 0)))
        if kind != "command" and len(value) == 8:
            count, rate = struct.unpack("<II", bytes(value))
            self.burst(count, rate)

    @dbus.service.method(CHRC)
    def StartNotify(self):
        self.notifying = True
        p("StartNotify", self.uuid[4:8])

    @dbus.service.method(CHRC)
    def StopNotify(self):
        self.notifying = False
        p("StopNotify", self.uuid[4:8])

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def send(self, payload):
        self.PropertiesChanged(CHRC, {"Value": dbus.Array(payload, signature="y")}, [])

    def burst(self, count, rate):
        # Sent in ticks of 5 ms, each carrying the values due by then.
        state = {"seq": 0, "start": time.monotonic()}
        p("BURST", count, rate)

        def tick():
            due = min(count, int((time.monotonic() - state["start"]) * rate) + 1)
            while state["seq"] < due:
                self.send(struct.pack("<IQ", state["seq"], time.monotonic_ns()))
                state["seq"] += 1
            if state["seq"] >= count:
                p("BURST-DONE", count, rate, "in", "%.3f" % (time.monotonic() - state["start"]))
                return False
            return True

        GLib.timeout_add(5, tick)


class App(dbus.service.Object):
    def __init__(self):
        dbus.service.Object.__init__(self, bus, ROOT)
        self.service = Service()
        self.chars = [
            Characteristic(
                0, "f00d0001-0000-4000-8000-00000000f00d", ["read", "write", "write-without-response", "notify"]
            ),
            Characteristic(1, "f00d0002-0000-4000-8000-00000000f00d", ["read", "indicate"]),
        ]

    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        r = {dbus.ObjectPath(SVC): self.service.props()}
        for c in self.chars:
            r[dbus.ObjectPath(c.path)] = c.props()
        return r


app = App()
mgr = dbus.Interface(bus.get_object("org.bluez", "/org/bluez/hci1"), "org.bluez.GattManager1")
loop = GLib.MainLoop()
mgr.RegisterApplication(
    dbus.ObjectPath(ROOT),
    {},
    reply_handler=lambda: p("REGISTERED"),
    error_handler=lambda e: (p("REGISTER-FAILED", e), loop.quit()),
)
loop.run()
