#!/usr/bin/python3 -u
# Records what the real bluetoothd sends a central client, as a fixture for
# the object-tree reducer test (Tests/BlueZTests/Fixtures/).
#
# Runs inside the VM of ../shared/bluez-vm (see scripts/record-bluez-signals.sh):
# takes GetManagedObjects once, then drives hci0 against the example
# peripheral on hci1 (discover, connect, resolve services, read, notify,
# write with and without an ATT error, disconnect) while writing every
# signal org.bluez emits, in arrival order, as one JSON line each.
#
# Values are written with their D-Bus types: [signature, payload], variants
# as ["v", inner], byte arrays as ["ay", "hex"], dictionaries as
# ["a{..}", [[key, value], ...]].
import json
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

OUT = sys.argv[1] if len(sys.argv) > 1 else "/dev/stdout"
BLUEZ = "org.bluez"
ADAPTER = "/org/bluez/hci0"
DEVICE = ADAPTER + "/dev_00_AA_01_01_00_01"
GCHR = "org.bluez.GattCharacteristic1"

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
ctx = GLib.MainContext.default()
GLib.timeout_add(50, lambda: True)
out = open(OUT, "w")
start = time.monotonic()
objects = {}


def sig_of(v, variant=True):
    if variant and getattr(v, "variant_level", 0) > 0:
        return "v"
    for t, s in (
        (dbus.Boolean, "b"),
        (dbus.Byte, "y"),
        (dbus.Int16, "n"),
        (dbus.UInt16, "q"),
        (dbus.Int32, "i"),
        (dbus.UInt32, "u"),
        (dbus.Int64, "x"),
        (dbus.UInt64, "t"),
        (dbus.Double, "d"),
        (dbus.ObjectPath, "o"),
        (dbus.Signature, "g"),
        (dbus.String, "s"),
    ):
        if isinstance(v, t):
            return s
    if isinstance(v, dbus.Dictionary):
        return "a{" + v.signature + "}"
    if isinstance(v, dbus.Array):
        return "a" + v.signature
    if isinstance(v, dbus.Struct):
        return "(" + "".join(sig_of(f) for f in v) + ")"
    raise TypeError(type(v))


def enc(v, variant=True):
    # dbus-python unwraps variants and marks the value with variant_level.
    if variant and getattr(v, "variant_level", 0) > 0:
        return ["v", enc(v, variant=False)]
    s = sig_of(v, variant=False)
    if s == "ay":
        return [s, bytes(int(b) for b in v).hex()]
    if s.startswith("a{"):
        return [s, [[enc(k), enc(x)] for k, x in v.items()]]
    if s.startswith("a") or s.startswith("("):
        return [s, [enc(x) for x in v]]
    if s == "b":
        return [s, bool(v)]
    if s in "ynqiuxt":
        return [s, int(v)]
    if s == "d":
        return [s, float(v)]
    return [s, str(v)]


def write(record):
    record["t"] = round(time.monotonic() - start, 3)
    out.write(json.dumps(record) + "\n")
    out.flush()


def on_message(_bus, message):
    if message.get_type() != 4:  # signals only
        return
    if message.get_sender() != owner:
        return
    path, iface, member = message.get_path(), message.get_interface(), message.get_member()
    args = message.get_args_list()
    write({"kind": "signal", "path": path, "interface": iface, "member": member, "body": [enc(a) for a in args]})
    if member == "InterfacesAdded":
        objects.setdefault(str(args[0]), {}).update({str(k): dict(v) for k, v in args[1].items()})
    elif member == "InterfacesRemoved":
        for i in args[1]:
            objects.get(str(args[0]), {}).pop(str(i), None)
    elif member == "PropertiesChanged":
        objects.setdefault(path, {}).setdefault(str(args[0]), {}).update(dict(args[1]))


owner = str(bus.get_name_owner(BLUEZ))
bus.add_match_string("type='signal',sender='org.bluez'")
bus.add_message_filter(on_message)


def spin(seconds, until=None):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if until and until():
            return True
        ctx.iteration(True)
    return bool(until and until())


def call(label, path, iface, method, *args, **kw):
    obj = dbus.Interface(bus.get_object(BLUEZ, path), iface)
    try:
        reply = getattr(obj, method)(*args, timeout=kw.get("timeout", 30))
        write(
            {
                "kind": "call",
                "label": label,
                "path": path,
                "method": iface + "." + method,
                "reply": None if reply is None else enc(reply),
            }
        )
        return reply
    except dbus.exceptions.DBusException as e:
        write(
            {
                "kind": "call",
                "label": label,
                "path": path,
                "method": iface + "." + method,
                "error": e.get_dbus_name(),
                "message": e.get_dbus_message(),
            }
        )
        return None


managed = dbus.Interface(bus.get_object(BLUEZ, "/"), "org.freedesktop.DBus.ObjectManager").GetManagedObjects()
write({"kind": "managedObjects", "body": [enc(managed)]})
for p, ifs in managed.items():
    objects[str(p)] = {str(k): dict(v) for k, v in ifs.items()}


def chars():
    return {str(ifs[GCHR]["UUID"])[4:8]: p for p, ifs in objects.items() if p.startswith(DEVICE + "/") and GCHR in ifs}


def prop(path, iface, name):
    return objects.get(path, {}).get(iface, {}).get(name)


P = "org.freedesktop.DBus.Properties"
call("power on", ADAPTER, P, "Set", "org.bluez.Adapter1", "Powered", dbus.Boolean(True, variant_level=1))
call(
    "filter",
    ADAPTER,
    "org.bluez.Adapter1",
    "SetDiscoveryFilter",
    dbus.Dictionary({"Transport": dbus.String("le", variant_level=1)}, signature="sv"),
)
call("scan", ADAPTER, "org.bluez.Adapter1", "StartDiscovery")
spin(30, lambda: "org.bluez.Device1" in objects.get(DEVICE, {}))
spin(2)
call("stop scan", ADAPTER, "org.bluez.Adapter1", "StopDiscovery")
spin(1)
call("connect", DEVICE, "org.bluez.Device1", "Connect", timeout=40)
spin(20, lambda: prop(DEVICE, "org.bluez.Device1", "ServicesResolved"))
spin(1)
c = chars()
write({"kind": "note", "characteristics": c})
if "2a38" in c:
    call("read 2a38", c["2a38"], GCHR, "ReadValue", dbus.Dictionary({}, signature="sv"))
    call(
        "read 2a38 offset 1",
        c["2a38"],
        GCHR,
        "ReadValue",
        dbus.Dictionary({"offset": dbus.UInt16(1, variant_level=1)}, signature="sv"),
    )
if "2a37" in c:
    call("notify 2a37", c["2a37"], GCHR, "StartNotify")
    spin(3.5)
    call("stop notify 2a37", c["2a37"], GCHR, "StopNotify")
    spin(0.5)
if "2a39" in c:
    call(
        "write 2a39 01",
        c["2a39"],
        GCHR,
        "WriteValue",
        dbus.Array([dbus.Byte(1)], signature="y"),
        dbus.Dictionary({"type": dbus.String("request", variant_level=1)}, signature="sv"),
    )
    call(
        "write 2a39 02 (ATT error)",
        c["2a39"],
        GCHR,
        "WriteValue",
        dbus.Array([dbus.Byte(2)], signature="y"),
        dbus.Dictionary({"type": dbus.String("request", variant_level=1)}, signature="sv"),
    )
if "2a19" in c:
    call("read 2a19", c["2a19"], GCHR, "ReadValue", dbus.Dictionary({}, signature="sv"))
call("connect again", DEVICE, "org.bluez.Device1", "Connect", timeout=10)
call("disconnect", DEVICE, "org.bluez.Device1", "Disconnect")
spin(3, lambda: prop(DEVICE, "org.bluez.Device1", "Connected") is False)
spin(1)
call("remove", ADAPTER, "org.bluez.Adapter1", "RemoveDevice", dbus.ObjectPath(DEVICE))
spin(1)
write({"kind": "end"})
out.close()
