#!/usr/bin/python3 -u
# Probe of the real bluetoothd 5.66 for the BlueZ simulator: introspection,
# object properties, error names and messages, signal order (hci0 central
# against the rig's example GATT server on hci1). Writes under argv[1].
import dbus, dbus.mainloop.glib, os, sys, time, json, subprocess, threading
from gi.repository import GLib
OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
T0 = time.time()
log = open(OUT + '/probe.log', 'w')
def p(*a):
    s = '%7.3f ' % (time.time() - T0) + ' '.join(str(x) for x in a)
    print(s); log.write(s + '\n'); log.flush()
sig = open(OUT + '/signals.log', 'w')
def on_sig(*args, **kw):
    s = '%7.3f %s %s %s' % (time.time() - T0, kw.get('member'), kw.get('path'), json.dumps(jsonable(args)))
    sig.write(s + '\n'); sig.flush()
def jsonable(v):
    if isinstance(v, (dbus.Array, list, tuple, dbus.Struct)):
        if isinstance(v, dbus.Array) and v.signature == 'y': return 'bytes:' + bytes(v).hex()
        return [jsonable(x) for x in v]
    if isinstance(v, (dict, dbus.Dictionary)): return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, dbus.Boolean): return bool(v)
    if isinstance(v, (int, dbus.Byte)): return int(v)
    return str(v)
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
def introspect(path, name):
    try:
        x = obj(path).Introspect(dbus_interface='org.freedesktop.DBus.Introspectable')
        open(OUT + '/introspect-' + name + '.xml', 'w').write(x)
    except Exception as e: p('introspect', path, 'ERR', e)
def managed(name):
    m = obj('/').GetManagedObjects(dbus_interface='org.freedesktop.DBus.ObjectManager')
    json.dump(jsonable(m), open(OUT + '/managed-' + name + '.json', 'w'), indent=1, sort_keys=True)
    return m
def call(label, path, iface, method, *args, timeout=30):
    t = time.time()
    done = {}
    def ok(*r): done['r'] = ('OK', jsonable(r))
    def err(e): done['r'] = ('ERR', e.get_dbus_name(), e.get_dbus_message())
    getattr(dbus.Interface(obj(path), iface), method)(*args, reply_handler=ok, error_handler=err, timeout=timeout)
    spin(timeout + 1, lambda: 'r' in done)
    p('CALL', label, method, '->', done.get('r'), 'in %.3fs' % (time.time() - t))
    return done.get('r')
def prop(path, iface, name):
    try: return jsonable(obj(path).Get(iface, name, dbus_interface='org.freedesktop.DBus.Properties'))
    except dbus.exceptions.DBusException as e: return ('ERR', e.get_dbus_name(), e.get_dbus_message())
A = '/org/bluez/hci0'; AD = 'org.bluez.Adapter1'; DV = 'org.bluez.Device1'; CH = 'org.bluez.GattCharacteristic1'; DS = 'org.bluez.GattDescriptor1'
DEV = A + '/dev_00_AA_01_01_00_01'
introspect('/', 'root'); introspect('/org/bluez', 'org-bluez'); introspect(A, 'hci0'); introspect('/org', 'org')
managed('start')
p('adapter props', json.dumps(jsonable(obj(A).GetAll(AD, dbus_interface='org.freedesktop.DBus.Properties'))))
call('stop-without-start', A, AD, 'StopDiscovery')
call('get-filters', A, AD, 'GetDiscoveryFilters')
call('filter-bad-key', A, AD, 'SetDiscoveryFilter', dbus.Dictionary({'Bogus': dbus.Boolean(True)}, signature='sv'))
call('filter-bad-transport', A, AD, 'SetDiscoveryFilter', dbus.Dictionary({'Transport': 'bogus'}, signature='sv'))
call('filter-rssi-wrongtype', A, AD, 'SetDiscoveryFilter', dbus.Dictionary({'RSSI': dbus.UInt16(5)}, signature='sv'))
call('filter-rssi-and-pathloss', A, AD, 'SetDiscoveryFilter', dbus.Dictionary({'RSSI': dbus.Int16(-60), 'Pathloss': dbus.UInt16(5)}, signature='sv'))
call('remove-unknown', A, AD, 'RemoveDevice', dbus.ObjectPath(A + '/dev_11_22_33_44_55_66'))
call('remove-badpath', A, AD, 'RemoveDevice', dbus.ObjectPath('/foo'))
call('power-off', A, 'org.freedesktop.DBus.Properties', 'Set', AD, 'Powered', dbus.Boolean(False))
spin(1)
call('start-while-off', A, AD, 'StartDiscovery')
call('filter-while-off', A, AD, 'SetDiscoveryFilter', dbus.Dictionary({'Transport': 'le'}, signature='sv'))
call('stop-while-off', A, AD, 'StopDiscovery')
call('power-on', A, 'org.freedesktop.DBus.Properties', 'Set', AD, 'Powered', dbus.Boolean(True))
spin(1)
call('filter-le', A, AD, 'SetDiscoveryFilter', dbus.Dictionary({'Transport': 'le'}, signature='sv'))
call('start', A, AD, 'StartDiscovery')
call('start-again', A, AD, 'StartDiscovery')
p('filters', call('get-filters', A, AD, 'GetDiscoveryFilters'))
def has_dev(): return DEV in managed('poll')
found = spin(25, has_dev); p('device found', found)
introspect(DEV, 'device')
p('device props', json.dumps(jsonable(obj(DEV).GetAll(DV, dbus_interface='org.freedesktop.DBus.Properties'))))
spin(3)
call('stop', A, AD, 'StopDiscovery')
p('RSSI after stop', prop(DEV, DV, 'RSSI'))
call('disconnect-not-connected', DEV, DV, 'Disconnect')
call('cancel-pairing-none', DEV, DV, 'CancelPairing')
# two concurrent connects
res = {}
def c1ok(*r): res['a'] = ('OK', time.time() - T0)
def c1err(e): res['a'] = ('ERR', e.get_dbus_name(), e.get_dbus_message())
def c2ok(*r): res['b'] = ('OK', time.time() - T0)
def c2err(e): res['b'] = ('ERR', e.get_dbus_name(), e.get_dbus_message())
t = time.time()
dv = dbus.Interface(obj(DEV), DV)
dv.Connect(reply_handler=c1ok, error_handler=c1err, timeout=40)
dv.Connect(reply_handler=c2ok, error_handler=c2err, timeout=40)
spin(40, lambda: 'a' in res and 'b' in res)
p('CONNECT first', res.get('a'), 'second', res.get('b'), 'in %.3fs' % (time.time() - t))
p('Connected prop', prop(DEV, DV, 'Connected'), 'ServicesResolved', prop(DEV, DV, 'ServicesResolved'))
spin(20, lambda: prop(DEV, DV, 'ServicesResolved') == True)
p('ServicesResolved at', time.time() - t)
call('connect-again', DEV, DV, 'Connect')
m = managed('connected')
chars = {}; descs = {}
for path, ifs in m.items():
    if CH in ifs: chars[str(ifs[CH]['UUID'])] = str(path)
    if DS in ifs: descs[str(ifs[DS]['UUID'])] = str(path)
    if str(path).startswith(DEV + '/'):
        kind = 'service' if 'org.bluez.GattService1' in ifs else 'char' if CH in ifs else 'desc'
        introspect(str(path), kind)
p('chars', json.dumps(chars)); p('descs', json.dumps(descs))
def U(s): return '0000%s-0000-1000-8000-00805f9b34fb' % s
def o(d): return dbus.Dictionary(d, signature='sv')
hrm, bsl, hcp, bat = chars.get(U('2a37')), chars.get(U('2a38')), chars.get(U('2a39')), chars.get(U('2a19'))
tst = chars.get('12345678-1234-5678-1234-56789abcdef1'); enc = chars.get('12345678-1234-5678-1234-56789abcdef4')
call('read-notify-only', hrm, CH, 'ReadValue', o({}))
call('read-write-only', hcp, CH, 'ReadValue', o({}))
call('read-bsl', bsl, CH, 'ReadValue', o({}))
call('read-bsl-offset1', bsl, CH, 'ReadValue', o({'offset': dbus.UInt16(1)}))
call('read-bsl-offset5', bsl, CH, 'ReadValue', o({'offset': dbus.UInt16(5)}))
call('read-bsl-offset-wrongtype', bsl, CH, 'ReadValue', o({'offset': dbus.UInt32(0)}))
call('read-bsl-unknown-option', bsl, CH, 'ReadValue', o({'foo': dbus.UInt16(0)}))
call('read-bsl-mtu-option', bsl, CH, 'ReadValue', o({'mtu': dbus.UInt16(23)}))
call('write-readonly', bsl, CH, 'WriteValue', dbus.Array([dbus.Byte(1)], signature='y'), o({}))
call('write-cp-1', hcp, CH, 'WriteValue', dbus.Array([dbus.Byte(1)], signature='y'), o({}))
call('write-cp-2', hcp, CH, 'WriteValue', dbus.Array([dbus.Byte(2)], signature='y'), o({}))
call('write-cp-command', hcp, CH, 'WriteValue', dbus.Array([dbus.Byte(1)], signature='y'), o({'type': 'command'}))
call('write-cp-request', hcp, CH, 'WriteValue', dbus.Array([dbus.Byte(1)], signature='y'), o({'type': 'request'}))
call('write-cp-badtype', hcp, CH, 'WriteValue', dbus.Array([dbus.Byte(1)], signature='y'), o({'type': 'bogus'}))
call('write-cp-offset3', hcp, CH, 'WriteValue', dbus.Array([dbus.Byte(1)], signature='y'), o({'offset': dbus.UInt16(3)}))
call('write-cp-empty', hcp, CH, 'WriteValue', dbus.Array([], signature='y'), o({}))
if tst:
    call('read-test', tst, CH, 'ReadValue', o({}))
    call('write-test', tst, CH, 'WriteValue', dbus.Array([dbus.Byte(9), dbus.Byte(8)], signature='y'), o({}))
    call('read-test2', tst, CH, 'ReadValue', o({}))
    call('write-test-offset', tst, CH, 'WriteValue', dbus.Array([dbus.Byte(7)], signature='y'), o({'offset': dbus.UInt16(1)}))
    call('read-test3', tst, CH, 'ReadValue', o({}))
    call('write-test-long', tst, CH, 'WriteValue', dbus.Array([dbus.Byte(i & 255) for i in range(100)], signature='y'), o({}))
    call('read-test-long', tst, CH, 'ReadValue', o({}))
    call('read-test-long-offset', tst, CH, 'ReadValue', o({'offset': dbus.UInt16(30)}))
    call('read-test-long-offset100', tst, CH, 'ReadValue', o({'offset': dbus.UInt16(100)}))
    call('read-test-long-offset101', tst, CH, 'ReadValue', o({'offset': dbus.UInt16(101)}))
for u, d in descs.items(): call('read-desc-' + u[:8], d, DS, 'ReadValue', o({}))
call('startnotify-bsl', bsl, CH, 'StartNotify')
call('startnotify-hrm', hrm, CH, 'StartNotify')
call('startnotify-hrm-again', hrm, CH, 'StartNotify')
spin(3)
call('stopnotify-hrm', hrm, CH, 'StopNotify')
call('stopnotify-hrm-again', hrm, CH, 'StopNotify')
call('stopnotify-bsl', bsl, CH, 'StopNotify')
call('startnotify-bat', bat, CH, 'StartNotify')
p('bat Notifying', prop(bat, CH, 'Notifying'), 'MTU', prop(bat, CH, 'MTU'), 'Value', prop(bat, CH, 'Value'))
if enc: call('read-encrypted', enc, CH, 'ReadValue', o({}))
p('Paired', prop(DEV, DV, 'Paired'), 'Bonded', prop(DEV, DV, 'Bonded'))
call('pair', DEV, DV, 'Pair', timeout=40)
call('pair-again', DEV, DV, 'Pair')
call('cancel-pairing-after', DEV, DV, 'CancelPairing')
if enc: call('read-encrypted-after-pair', enc, CH, 'ReadValue', o({}))
p('Paired', prop(DEV, DV, 'Paired'), 'Bonded', prop(DEV, DV, 'Bonded'), 'Trusted', prop(DEV, DV, 'Trusted'))
call('disconnect', DEV, DV, 'Disconnect')
spin(2)
call('read-after-disconnect', bsl, CH, 'ReadValue', o({}))
p('objects after disconnect', sorted(str(x) for x in managed('disconnected') if str(x).startswith(DEV)))
call('power-off2', A, 'org.freedesktop.DBus.Properties', 'Set', AD, 'Powered', dbus.Boolean(False))
spin(2)
p('device after power off', DEV in managed('poweroff'), prop(DEV, DV, 'Connected'))
call('connect-while-off', DEV, DV, 'Connect')
call('pair-while-off', DEV, DV, 'Pair')
call('power-on2', A, 'org.freedesktop.DBus.Properties', 'Set', AD, 'Powered', dbus.Boolean(True))
spin(2)
spin(1)
managed('end')
p('done')
