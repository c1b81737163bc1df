#!/usr/bin/python3 -u
# Probe of the real bluetoothd 5.66 for the BlueZ simulator: introspection,
# object properties, error names and messages, signal order (hci0 central
# against the rig's example GATT server on hci1). Writes under argv[1].
import json
import time

import dbus

from probelib import AD, CH, DEV, DS, DV, OUT, T0, A, call, jsonable, managed, o, obj, open_logs, p, prop, spin

open_logs("probe.log", "signals.log")


def introspect(path, name):
    try:
        x = obj(path).Introspect(dbus_interface="org.freedesktop.DBus.Introspectable")
        open(OUT + "/introspect-" + name + ".xml", "w").write(x)
    except Exception as e:
        p("introspect", path, "ERR", e)


def managed_as(name):
    """GetManagedObjects, kept in OUT/managed-<name>.json."""
    m = managed()
    json.dump(jsonable(m), open(OUT + "/managed-" + name + ".json", "w"), indent=1, sort_keys=True)
    return m


introspect("/", "root")
introspect("/org/bluez", "org-bluez")
introspect(A, "hci0")
introspect("/org", "org")
managed_as("start")
p("adapter props", json.dumps(jsonable(obj(A).GetAll(AD, dbus_interface="org.freedesktop.DBus.Properties"))))
call("stop-without-start", A, AD, "StopDiscovery")
call("get-filters", A, AD, "GetDiscoveryFilters")
call("filter-bad-key", A, AD, "SetDiscoveryFilter", dbus.Dictionary({"Bogus": dbus.Boolean(True)}, signature="sv"))
call("filter-bad-transport", A, AD, "SetDiscoveryFilter", dbus.Dictionary({"Transport": "bogus"}, signature="sv"))
call("filter-rssi-wrongtype", A, AD, "SetDiscoveryFilter", dbus.Dictionary({"RSSI": dbus.UInt16(5)}, signature="sv"))
call(
    "filter-rssi-and-pathloss",
    A,
    AD,
    "SetDiscoveryFilter",
    dbus.Dictionary({"RSSI": dbus.Int16(-60), "Pathloss": dbus.UInt16(5)}, signature="sv"),
)
call("remove-unknown", A, AD, "RemoveDevice", dbus.ObjectPath(A + "/dev_11_22_33_44_55_66"))
call("remove-badpath", A, AD, "RemoveDevice", dbus.ObjectPath("/foo"))
call("power-off", A, "org.freedesktop.DBus.Properties", "Set", AD, "Powered", dbus.Boolean(False))
spin(1)
call("start-while-off", A, AD, "StartDiscovery")
call("filter-while-off", A, AD, "SetDiscoveryFilter", dbus.Dictionary({"Transport": "le"}, signature="sv"))
call("stop-while-off", A, AD, "StopDiscovery")
call("power-on", A, "org.freedesktop.DBus.Properties", "Set", AD, "Powered", dbus.Boolean(True))
spin(1)
call("filter-le", A, AD, "SetDiscoveryFilter", dbus.Dictionary({"Transport": "le"}, signature="sv"))
call("start", A, AD, "StartDiscovery")
call("start-again", A, AD, "StartDiscovery")
p("filters", call("get-filters", A, AD, "GetDiscoveryFilters"))


def has_dev():
    return DEV in managed_as("poll")


found = spin(25, has_dev)
p("device found", found)
introspect(DEV, "device")
p("device props", json.dumps(jsonable(obj(DEV).GetAll(DV, dbus_interface="org.freedesktop.DBus.Properties"))))
spin(3)
call("stop", A, AD, "StopDiscovery")
p("RSSI after stop", prop(DEV, DV, "RSSI"))
call("disconnect-not-connected", DEV, DV, "Disconnect")
call("cancel-pairing-none", DEV, DV, "CancelPairing")
# two concurrent connects
res: dict[str, tuple[object, ...]] = {}


def c1ok(*r):
    res["a"] = ("OK", time.time() - T0)


def c1err(e):
    res["a"] = ("ERR", e.get_dbus_name(), e.get_dbus_message())


def c2ok(*r):
    res["b"] = ("OK", time.time() - T0)


def c2err(e):
    res["b"] = ("ERR", e.get_dbus_name(), e.get_dbus_message())


t = time.time()
dv = dbus.Interface(obj(DEV), DV)
dv.Connect(reply_handler=c1ok, error_handler=c1err, timeout=40)
dv.Connect(reply_handler=c2ok, error_handler=c2err, timeout=40)
spin(40, lambda: "a" in res and "b" in res)
p("CONNECT first", res.get("a"), "second", res.get("b"), "in %.3fs" % (time.time() - t))
p("Connected prop", prop(DEV, DV, "Connected"), "ServicesResolved", prop(DEV, DV, "ServicesResolved"))
spin(20, lambda: prop(DEV, DV, "ServicesResolved") is True)
p("ServicesResolved at", time.time() - t)
call("connect-again", DEV, DV, "Connect")
m = managed_as("connected")
chars = {}
descs = {}
for path, ifs in m.items():
    if CH in ifs:
        chars[str(ifs[CH]["UUID"])] = str(path)
    if DS in ifs:
        descs[str(ifs[DS]["UUID"])] = str(path)
    if str(path).startswith(DEV + "/"):
        kind = "service" if "org.bluez.GattService1" in ifs else "char" if CH in ifs else "desc"
        introspect(str(path), kind)
p("chars", json.dumps(chars))
p("descs", json.dumps(descs))


def U(s):
    return f"0000{s}-0000-1000-8000-00805f9b34fb"


hrm, bsl, hcp, bat = chars.get(U("2a37")), chars.get(U("2a38")), chars.get(U("2a39")), chars.get(U("2a19"))
tst = chars.get("12345678-1234-5678-1234-56789abcdef1")
enc = chars.get("12345678-1234-5678-1234-56789abcdef4")
call("read-notify-only", hrm, CH, "ReadValue", o({}))
call("read-write-only", hcp, CH, "ReadValue", o({}))
call("read-bsl", bsl, CH, "ReadValue", o({}))
call("read-bsl-offset1", bsl, CH, "ReadValue", o({"offset": dbus.UInt16(1)}))
call("read-bsl-offset5", bsl, CH, "ReadValue", o({"offset": dbus.UInt16(5)}))
call("read-bsl-offset-wrongtype", bsl, CH, "ReadValue", o({"offset": dbus.UInt32(0)}))
call("read-bsl-unknown-option", bsl, CH, "ReadValue", o({"foo": dbus.UInt16(0)}))
call("read-bsl-mtu-option", bsl, CH, "ReadValue", o({"mtu": dbus.UInt16(23)}))
call("write-readonly", bsl, CH, "WriteValue", dbus.Array([dbus.Byte(1)], signature="y"), o({}))
call("write-cp-1", hcp, CH, "WriteValue", dbus.Array([dbus.Byte(1)], signature="y"), o({}))
call("write-cp-2", hcp, CH, "WriteValue", dbus.Array([dbus.Byte(2)], signature="y"), o({}))
call("write-cp-command", hcp, CH, "WriteValue", dbus.Array([dbus.Byte(1)], signature="y"), o({"type": "command"}))
call("write-cp-request", hcp, CH, "WriteValue", dbus.Array([dbus.Byte(1)], signature="y"), o({"type": "request"}))
call("write-cp-badtype", hcp, CH, "WriteValue", dbus.Array([dbus.Byte(1)], signature="y"), o({"type": "bogus"}))
call(
    "write-cp-offset3", hcp, CH, "WriteValue", dbus.Array([dbus.Byte(1)], signature="y"), o({"offset": dbus.UInt16(3)})
)
call("write-cp-empty", hcp, CH, "WriteValue", dbus.Array([], signature="y"), o({}))
if tst:
    call("read-test", tst, CH, "ReadValue", o({}))
    call("write-test", tst, CH, "WriteValue", dbus.Array([dbus.Byte(9), dbus.Byte(8)], signature="y"), o({}))
    call("read-test2", tst, CH, "ReadValue", o({}))
    call(
        "write-test-offset",
        tst,
        CH,
        "WriteValue",
        dbus.Array([dbus.Byte(7)], signature="y"),
        o({"offset": dbus.UInt16(1)}),
    )
    call("read-test3", tst, CH, "ReadValue", o({}))
    call(
        "write-test-long",
        tst,
        CH,
        "WriteValue",
        dbus.Array([dbus.Byte(i & 255) for i in range(100)], signature="y"),
        o({}),
    )
    call("read-test-long", tst, CH, "ReadValue", o({}))
    call("read-test-long-offset", tst, CH, "ReadValue", o({"offset": dbus.UInt16(30)}))
    call("read-test-long-offset100", tst, CH, "ReadValue", o({"offset": dbus.UInt16(100)}))
    call("read-test-long-offset101", tst, CH, "ReadValue", o({"offset": dbus.UInt16(101)}))
for u, d in descs.items():
    call("read-desc-" + u[:8], d, DS, "ReadValue", o({}))
call("startnotify-bsl", bsl, CH, "StartNotify")
call("startnotify-hrm", hrm, CH, "StartNotify")
call("startnotify-hrm-again", hrm, CH, "StartNotify")
spin(3)
call("stopnotify-hrm", hrm, CH, "StopNotify")
call("stopnotify-hrm-again", hrm, CH, "StopNotify")
call("stopnotify-bsl", bsl, CH, "StopNotify")
call("startnotify-bat", bat, CH, "StartNotify")
p("bat Notifying", prop(bat, CH, "Notifying"), "MTU", prop(bat, CH, "MTU"), "Value", prop(bat, CH, "Value"))
if enc:
    call("read-encrypted", enc, CH, "ReadValue", o({}))
p("Paired", prop(DEV, DV, "Paired"), "Bonded", prop(DEV, DV, "Bonded"))
call("pair", DEV, DV, "Pair", timeout=40)
call("pair-again", DEV, DV, "Pair")
call("cancel-pairing-after", DEV, DV, "CancelPairing")
if enc:
    call("read-encrypted-after-pair", enc, CH, "ReadValue", o({}))
p("Paired", prop(DEV, DV, "Paired"), "Bonded", prop(DEV, DV, "Bonded"), "Trusted", prop(DEV, DV, "Trusted"))
call("disconnect", DEV, DV, "Disconnect")
spin(2)
call("read-after-disconnect", bsl, CH, "ReadValue", o({}))
p("objects after disconnect", sorted(str(x) for x in managed_as("disconnected") if str(x).startswith(DEV)))
call("power-off2", A, "org.freedesktop.DBus.Properties", "Set", AD, "Powered", dbus.Boolean(False))
spin(2)
p("device after power off", DEV in managed_as("poweroff"), prop(DEV, DV, "Connected"))
call("connect-while-off", DEV, DV, "Connect")
call("pair-while-off", DEV, DV, "Pair")
call("power-on2", A, "org.freedesktop.DBus.Properties", "Set", AD, "Powered", dbus.Boolean(True))
spin(2)
spin(1)
managed_as("end")
p("done")
