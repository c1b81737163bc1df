#!/usr/bin/python3 -u
# Probe of the real bluetoothd 5.66's Advertisement Monitor API (passive
# scanning) for the gateway's passive presence source and the simulator:
# whether AdvertisementMonitorManager1 is on hci0 (only with -E?), its
# properties, which monitors bluetoothd activates or releases (good ones,
# no patterns, bad RSSI values, a bad type), DeviceFound / DeviceLost with
# the example peripheral on hci1 (its advertisement stopped and started
# again), a monitor added and removed after registration, the registration
# errors, and an application whose connection leaves the bus.
# Writes under argv[1]: probe-monitor.log (calls, replies and every call
# bluetoothd makes on our monitors), signals-monitor.log.
import os
import signal
import subprocess
import sys
import time

import dbus
import dbus.service

from probelib import DEV, DV, A, bus, call, managed, obj, open_logs, p, prop, spin

MGR = "org.bluez.AdvertisementMonitorManager1"
MON = "org.bluez.AdvertisementMonitor1"
OM = "org.freedesktop.DBus.ObjectManager"
PROPS = "org.freedesktop.DBus.Properties"
ROOT = "/org/blegateway/monitor"
calls: list = []


def pattern(start, ad_type, content):
    return dbus.Struct((dbus.Byte(start), dbus.Byte(ad_type), dbus.Array(content, signature="y")), signature="yyay")


class Monitor(dbus.service.Object):
    """One AdvertisementMonitor1; every call bluetoothd makes is logged."""

    def __init__(self, conn, root, name, props):
        self.path = f"{root}/{name}"
        self.name, self.props = name, props
        dbus.service.Object.__init__(self, conn, self.path)

    def note(self, method, *args):
        calls.append((self.name, method, [str(a) for a in args]))
        p("CALLED", self.name, method, *[str(a) for a in args])

    @dbus.service.method(MON, in_signature="", out_signature="")
    def Release(self):
        self.note("Release")

    @dbus.service.method(MON, in_signature="", out_signature="")
    def Activate(self):
        self.note("Activate")

    @dbus.service.method(MON, in_signature="o", out_signature="")
    def DeviceFound(self, device):
        self.note("DeviceFound", device)

    @dbus.service.method(MON, in_signature="o", out_signature="")
    def DeviceLost(self, device):
        self.note("DeviceLost", device)

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        self.note("GetAll", interface)
        return self.props

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        self.note("Get", interface, name)
        return self.props[name]


class App(dbus.service.Object):
    """The application root: an ObjectManager over its monitors."""

    def __init__(self, conn, root):
        self.conn, self.root, self.monitors = conn, root, {}
        dbus.service.Object.__init__(self, conn, root)

    def add(self, name, props, announce=False):
        m = Monitor(self.conn, self.root, name, dbus.Dictionary(props, signature="sv"))
        self.monitors[name] = m
        if announce:
            self.InterfacesAdded(dbus.ObjectPath(m.path), {MON: m.props})
        return m

    def remove(self, name):
        m = self.monitors.pop(name)
        m.remove_from_connection()
        self.InterfacesRemoved(dbus.ObjectPath(m.path), [MON])

    @dbus.service.method(OM, in_signature="", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        p("CALLED", self.root, "GetManagedObjects")
        return {dbus.ObjectPath(m.path): {MON: m.props} for m in self.monitors.values()}

    @dbus.service.signal(OM, signature="oa{sa{sv}}")
    def InterfacesAdded(self, path, interfaces):
        pass

    @dbus.service.signal(OM, signature="oas")
    def InterfacesRemoved(self, path, interfaces):
        pass


def t(kind):
    return dbus.String(kind)


MANUFACTURER = pattern(0, 0xFF, [0xFF, 0xFF])  # company 0xffff, little endian
HEART_RATE = pattern(0, 0x03, [0x0D, 0x18])  # complete 16-bit UUID list starts with 180d
NOMATCH = pattern(0, 0xFF, [0x34, 0x12])


def rssi(low, high, low_to, high_to, period=0):
    return {
        "RSSILowThreshold": dbus.Int16(low),
        "RSSIHighThreshold": dbus.Int16(high),
        "RSSILowTimeout": dbus.UInt16(low_to),
        "RSSIHighTimeout": dbus.UInt16(high_to),
        "RSSISamplingPeriod": dbus.UInt16(period),
    }


def advertiser_pids():
    out = subprocess.run(["pgrep", "-f", "/tmp/example-advertisement.py"], capture_output=True, text=True)
    return [int(x) for x in out.stdout.split()]


open_logs("probe-monitor.log", "signals-monitor.log")
p("bluetoothd", subprocess.run(["bluetoothd", "-v"], capture_output=True, text=True).stdout.strip())
p("date", time.strftime("%Y-%m-%d %H:%M:%S %Z"))
adapter = managed()[dbus.ObjectPath(A)]
p("hci0 interfaces", sorted(str(i) for i in adapter))
with open(sys.argv[1] + "/introspect-hci0.xml", "w") as f:
    f.write(obj(A).Introspect(dbus_interface="org.freedesktop.DBus.Introspectable"))
app = App(bus, ROOT)
if MGR not in adapter:
    p("no AdvertisementMonitorManager1 on hci0")
    call("register-without-manager", A, MGR, "RegisterMonitor", dbus.ObjectPath(ROOT))
    p("Powered", prop(A, "org.bluez.Adapter1", "Powered"), "Discovering", prop(A, "org.bluez.Adapter1", "Discovering"))
    sys.exit(0)
p("SupportedMonitorTypes", prop(A, MGR, "SupportedMonitorTypes"))
p("SupportedFeatures", prop(A, MGR, "SupportedFeatures"))
p("Powered", prop(A, "org.bluez.Adapter1", "Powered"))

app.add("good", {"Type": t("or_patterns"), "Patterns": dbus.Array([MANUFACTURER], signature="(yyay)")})
app.add(
    "rssi",
    {"Type": t("or_patterns"), "Patterns": dbus.Array([HEART_RATE], signature="(yyay)"), **rssi(-100, -80, 5, 1)},
)
app.add("nomatch", {"Type": t("or_patterns"), "Patterns": dbus.Array([NOMATCH], signature="(yyay)")})
app.add("nopatterns", {"Type": t("or_patterns")})
app.add("emptypatterns", {"Type": t("or_patterns"), "Patterns": dbus.Array([], signature="(yyay)")})
app.add("badtype", {"Type": t("and_patterns"), "Patterns": dbus.Array([MANUFACTURER], signature="(yyay)")})
app.add(
    "lowabovehigh",
    {"Type": t("or_patterns"), "Patterns": dbus.Array([MANUFACTURER], signature="(yyay)"), **rssi(-50, -90, 5, 1)},
)
app.add(
    "highoutofrange",
    {"Type": t("or_patterns"), "Patterns": dbus.Array([MANUFACTURER], signature="(yyay)"), **rssi(-100, 50, 5, 1)},
)
app.add(
    "timeoutoutofrange",
    {"Type": t("or_patterns"), "Patterns": dbus.Array([MANUFACTURER], signature="(yyay)"), **rssi(-100, -80, 301, 1)},
)
app.add(
    "longpattern",
    {"Type": t("or_patterns"), "Patterns": dbus.Array([pattern(0, 0xFF, [1] * 32)], signature="(yyay)")},
)
app.add(
    "badadtype",
    {"Type": t("or_patterns"), "Patterns": dbus.Array([pattern(0, 0x00, [1])], signature="(yyay)")},
)

p("device before", DEV in managed(), "Discovering", prop(A, "org.bluez.Adapter1", "Discovering"))
call("register", A, MGR, "RegisterMonitor", dbus.ObjectPath(ROOT))
call("register-again", A, MGR, "RegisterMonitor", dbus.ObjectPath(ROOT))
call("register-not-exported", A, MGR, "RegisterMonitor", dbus.ObjectPath("/org/blegateway/none"))
call("unregister-unknown", A, MGR, "UnregisterMonitor", dbus.ObjectPath("/org/blegateway/other"))
p("Discovering after register", prop(A, "org.bluez.Adapter1", "Discovering"))
spin(30, lambda: any(c[1] == "DeviceFound" and c[0] == "good" for c in calls))
p("device after found", DEV in managed())
if DEV in managed():
    for name in ("RSSI", "ManufacturerData", "ServiceData", "UUIDs", "Name", "Alias", "AddressType", "Connected"):
        p("device", name, prop(DEV, DV, name))
spin(15)

p("--- a monitor added after registration")
app.add("late", {"Type": t("or_patterns"), "Patterns": dbus.Array([MANUFACTURER], signature="(yyay)")}, True)
spin(20, lambda: any(c[0] == "late" and c[1] == "DeviceFound" for c in calls))
spin(3)
p("--- a monitor removed after registration")
app.remove("late")
spin(5)

p("--- the advertisement stops", advertiser_pids())
for pid in advertiser_pids():
    os.kill(pid, signal.SIGTERM)
lost_at = time.time()
spin(60, lambda: any(c[0] == "good" and c[1] == "DeviceLost" for c in calls))
p("after stop: good lost", any(c[0] == "good" and c[1] == "DeviceLost" for c in calls), "in", time.time() - lost_at)
p("device after lost", DEV in managed())
spin(10)

p("--- the advertisement again")
log = open(sys.argv[1] + "/advertisement-again.log", "w")
adv = subprocess.Popen(
    ["python3", "-u", "/tmp/example-advertisement.py"], env={**os.environ, "PERIPH_HCI": "hci1"}, stdout=log, stderr=log
)
again = len(calls)
spin(40, lambda: any(c[0] == "good" and c[1] == "DeviceFound" for c in calls[again:]))
p("found again", any(c[0] == "good" and c[1] == "DeviceFound" for c in calls[again:]))
spin(5)

p("--- a discovery session beside the monitor")
call("filter", A, "org.bluez.Adapter1", "SetDiscoveryFilter", dbus.Dictionary({"Transport": "le"}, signature="sv"))
call("start", A, "org.bluez.Adapter1", "StartDiscovery")
spin(12)
call("stop", A, "org.bluez.Adapter1", "StopDiscovery")
spin(3)

p("--- a second application on its own connection, which then leaves the bus")
addr = os.environ.get("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/run/dbus/system_bus_socket")
other = dbus.bus.BusConnection(addr)
other_app = App(other, "/org/blegateway/other")
other_app.add("other", {"Type": t("or_patterns"), "Patterns": dbus.Array([MANUFACTURER], signature="(yyay)")})
other_proxy = dbus.Interface(other.get_object("org.bluez", A), MGR)
done: dict[str, str] = {}
other_proxy.RegisterMonitor(
    dbus.ObjectPath("/org/blegateway/other"),
    reply_handler=lambda: done.setdefault("r", "OK"),
    error_handler=lambda e: done.setdefault("r", e.get_dbus_name()),
)
spin(10, lambda: "r" in done)
p("other registered", done.get("r"))
spin(10, lambda: any(c[0] == "other" and c[1] == "DeviceFound" for c in calls))
p("other's connection closes")
other.close()
spin(10)
call("register-other-path-again", A, MGR, "RegisterMonitor", dbus.ObjectPath("/org/blegateway/other"))
spin(5)

p("--- unregister")
call("unregister", A, MGR, "UnregisterMonitor", dbus.ObjectPath(ROOT))
spin(5)
call("unregister-again", A, MGR, "UnregisterMonitor", dbus.ObjectPath(ROOT))
call("register-after-unregister", A, MGR, "RegisterMonitor", dbus.ObjectPath(ROOT))
spin(10)
call("unregister-final", A, MGR, "UnregisterMonitor", dbus.ObjectPath(ROOT))
spin(3)
p("summary", calls)
adv.terminate()
