#!/usr/bin/python3 -u
# Second probe of the real bluetoothd 5.66 for the BlueZ simulator: notify
# twice, a write request on a read-only value, RemoveDevice while connected,
# a trusted discovered device across a power-off. Writes under argv[1].
import dbus, dbus.mainloop.glib, os, sys, time, json
from gi.repository import GLib
OUT = sys.argv[1]; os.makedirs(OUT, exist_ok=True)
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus(); T0 = time.time()
log = open(OUT + '/probe2.log', 'w')
def p(*a):
    s = '%7.3f ' % (time.time() - T0) + ' '.join(str(x) for x in a); print(s); log.write(s + '\n'); log.flush()
sig = open(OUT + '/signals2.log', 'w')
def on_sig(*args, **kw):
    sig.write('%7.3f %s %s %s\n' % (time.time() - T0, kw.get('member'), kw.get('path'), str(args)[:300])); sig.flush()
bus.add_signal_receiver(on_sig, bus_name='org.bluez', member_keyword='member', path_keyword='path')
ctx = GLib.MainContext.default()
def spin(sec, pred=None):
    end = time.time() + sec
    while time.time() < end:
        ctx.iteration(False)
        if pred and pred(): return True
        time.sleep(0.005)
    return pred() if pred else True
def obj(path): return bus.get_object('org.bluez', path)
def call(label, path, iface, method, *args, timeout=30):
    t = time.time(); done = {}
    def ok(*r): done['r'] = ('OK', str(r)[:200])
    def err(e): done['r'] = ('ERR', e.get_dbus_name(), e.get_dbus_message())
    getattr(dbus.Interface(obj(path), iface), method)(*args, reply_handler=ok, error_handler=err, timeout=timeout)
    spin(timeout + 1, lambda: 'r' in done)
    p('CALL', label, method, '->', done.get('r'), 'in %.3fs' % (time.time() - t)); return done.get('r')
def prop(path, iface, name):
    try: return obj(path).Get(iface, name, dbus_interface='org.freedesktop.DBus.Properties')
    except dbus.exceptions.DBusException as e: return ('ERR', e.get_dbus_name())
def managed(): return obj('/').GetManagedObjects(dbus_interface='org.freedesktop.DBus.ObjectManager')
A = '/org/bluez/hci0'; AD = 'org.bluez.Adapter1'; DV = 'org.bluez.Device1'; CH = 'org.bluez.GattCharacteristic1'
DEV = A + '/dev_00_AA_01_01_00_01'
def o(d): return dbus.Dictionary(d, signature='sv')
def find():
    for attempt in range(5):
        call('filter', A, AD, 'SetDiscoveryFilter', dbus.Dictionary({'Transport': 'le'}, signature='sv'))
        call('start', A, AD, 'StartDiscovery')
        found = spin(11, lambda: DEV in managed())
        call('stop', A, AD, 'StopDiscovery')
        p('found', found, 'attempt', attempt)
        if found: return True
        spin(1)
    return False
find()
call('trust', DEV, 'org.freedesktop.DBus.Properties', 'Set', DV, 'Trusted', dbus.Boolean(True))
call('connect', DEV, DV, 'Connect')
p('resolved', spin(20, lambda: prop(DEV, DV, 'ServicesResolved') == True))
m = managed(); chars = {str(i[CH]['UUID'])[4:8]: str(pth) for pth, i in m.items() if CH in i}
call('notify1', chars['2a37'], CH, 'StartNotify'); spin(2)
call('notify2-after-2s', chars['2a37'], CH, 'StartNotify')
call('write-request-readonly', chars['2a38'], CH, 'WriteValue', dbus.Array([dbus.Byte(1)], signature='y'), o({'type': 'request'}))
call('write-command-offset', chars['2a39'], CH, 'WriteValue', dbus.Array([dbus.Byte(1)], signature='y'), o({'type': 'command', 'offset': dbus.UInt16(1)}))
call('read-after-connect-mtu', chars['2a38'], CH, 'ReadValue', o({}))
p('MTU', prop(chars['2a38'], CH, 'MTU'))
call('remove-connected', A, AD, 'RemoveDevice', dbus.ObjectPath(DEV))
spin(3)
p('after remove', DEV in managed())
find()
call('trust2', DEV, 'org.freedesktop.DBus.Properties', 'Set', DV, 'Trusted', dbus.Boolean(True))
call('power-off', A, 'org.freedesktop.DBus.Properties', 'Set', AD, 'Powered', dbus.Boolean(False)); spin(2)
p('trusted device after power off', DEV in managed())
call('connect-while-off', DEV, DV, 'Connect')
call('pair-while-off', DEV, DV, 'Pair')
call('disconnect-while-off', DEV, DV, 'Disconnect')
call('power-on', A, 'org.freedesktop.DBus.Properties', 'Set', AD, 'Powered', dbus.Boolean(True)); spin(1)
p('done')
