# What the probes share: the system bus, a time-stamped log of calls and
# replies, every org.bluez signal recorded to a file, a main-loop spin, and
# the rig's objects (hci0, and BlueZ's example peripheral seen from it).
# A probe imports what it uses by name, then calls open_logs(), under argv[1].
import json
import os
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
T0 = time.time()
ctx = GLib.MainContext.default()

A = "/org/bluez/hci0"
AD = "org.bluez.Adapter1"
DV = "org.bluez.Device1"
CH = "org.bluez.GattCharacteristic1"
DS = "org.bluez.GattDescriptor1"
DEV = A + "/dev_00_AA_01_01_00_01"
_log = None


def jsonable(v):
    if isinstance(v, (dbus.Array, list, tuple, dbus.Struct)):
        if isinstance(v, dbus.Array) and v.signature == "y":
            return "bytes:" + bytes(v).hex()
        return [jsonable(x) for x in v]
    if isinstance(v, (dict, dbus.Dictionary)):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, dbus.Boolean):
        return bool(v)
    if isinstance(v, (int, dbus.Byte)):
        return int(v)
    return str(v)


def p(*a):
    """Prints and logs a line stamped with the seconds since the start."""
    s = "%7.3f " % (time.time() - T0) + " ".join(str(x) for x in a)
    print(s)
    _log.write(s + "\n")
    _log.flush()


def open_logs(calls, signals, on_signal=None):
    """Logs to OUT/calls; records every org.bluez signal in OUT/signals
    (and passes it to on_signal(member, path, args) too)."""
    global _log
    _log = open(OUT + "/" + calls, "w")
    sig = open(OUT + "/" + signals, "w")

    def received(*args, **kw):
        member, path = kw.get("member"), kw.get("path")
        sig.write(f"{time.time() - T0:7.3f} {member} {path} {json.dumps(jsonable(args))}\n")
        sig.flush()
        if on_signal:
            on_signal(member, path, args)

    bus.add_signal_receiver(received, bus_name="org.bluez", member_keyword="member", path_keyword="path")


def spin(sec, pred=None):
    """Runs the main loop for sec seconds, or until pred() holds."""
    end = time.time() + sec
    while time.time() < end:
        ctx.iteration(False)
        if pred and pred():
            return True
        time.sleep(0.002)
    return pred() if pred else True


def obj(path):
    return bus.get_object("org.bluez", path)


def o(d):
    return dbus.Dictionary(d, signature="sv")


def start(label, path, iface, method, *args, timeout=30):
    """Sends a call; its reply or error is logged (with its time) when it comes."""
    t = time.time()
    done = {}

    def ok(*r):
        done["r"] = ("OK", jsonable(r))
        p("REPLY", label, done["r"], "in %.3fs" % (time.time() - t))

    def err(e):
        done["r"] = ("ERR", e.get_dbus_name(), e.get_dbus_message())
        p("REPLY", label, done["r"], "in %.3fs" % (time.time() - t))

    p("SEND", label, method)
    getattr(dbus.Interface(obj(path), iface), method)(*args, reply_handler=ok, error_handler=err, timeout=timeout)
    return done


def call(label, path, iface, method, *args, timeout=30):
    """Calls and waits for the reply: ('OK', values) or ('ERR', name, message)."""
    done = start(label, path, iface, method, *args, timeout=timeout)
    spin(timeout + 1, lambda: "r" in done)
    return done.get("r")


def prop(path, iface, name):
    try:
        return jsonable(obj(path).Get(iface, name, dbus_interface="org.freedesktop.DBus.Properties"))
    except dbus.exceptions.DBusException as e:
        return ("ERR", e.get_dbus_name(), e.get_dbus_message())


def managed():
    return obj("/").GetManagedObjects(dbus_interface="org.freedesktop.DBus.ObjectManager")


def find():
    """Scans until bluetoothd lists the peripheral (5 tries of 11 s: the
    kernel can drop btvirt's one advertising report per scan start)."""
    for attempt in range(5):
        call("filter", A, AD, "SetDiscoveryFilter", o({"Transport": "le"}))
        call("start", A, AD, "StartDiscovery")
        found = spin(11, lambda: DEV in managed())
        call("stop", A, AD, "StopDiscovery")
        p("found", found, "attempt", attempt)
        if found:
            return True
        spin(1)
    return False


def connect():
    """Connects, waits for ServicesResolved; the characteristics by 16-bit UUID."""
    call("connect", DEV, DV, "Connect")
    p("resolved", spin(20, lambda: prop(DEV, DV, "ServicesResolved") is True))
    return {str(i[CH]["UUID"])[4:8]: str(pth) for pth, i in managed().items() if CH in i}
