#!/usr/bin/python3 -u
# Third probe of the real bluetoothd 5.66 for the BlueZ simulator: the order
# and timing of a local Disconnect() (its reply against ServicesResolved and
# Connected turning false), with and without a notification session, and a
# read in between. Writes under argv[1]: probe3.log (calls, with the time
# each reply arrived) and signals3.log (every signal from org.bluez).
import dbus, dbus.mainloop.glib, os, sys, time
from gi.repository import GLib
OUT = sys.argv[1]; os.makedirs(OUT, exist_ok=True)
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus(); T0 = time.time()
log = open(OUT + '/probe3.log', 'w')
def p(*a):
    s = '%7.3f ' % (time.time() - T0) + ' '.join(str(x) for x in a); print(s); log.write(s + '\n'); log.flush()
sig = open(OUT + '/signals3.log', 'w')
def on_sig(*args, **kw):
    line = '%7.3f %s %s %s' % (time.time() - T0, kw.get('member'), kw.get('path'), str(args)[:300])
    sig.write(line + '\n'); sig.flush()
    if kw.get('path', '').endswith('dev_00_AA_01_01_00_01') and kw.get('member') == 'PropertiesChanged':
        p('SIGNAL', str(args)[:200])
bus.add_signal_receiver(on_sig, bus_name='org.bluez', member_keyword='member', path_keyword='path')
ctx = GLib.MainContext.default()
def spin(sec, pred=None):
    end = time.time() + sec
    while time.time() < end:
        ctx.iteration(False)
        if pred and pred(): return True
        time.sleep(0.002)
    return pred() if pred else True
def obj(path): return bus.get_object('org.bluez', path)
def start(label, path, iface, method, *args, timeout=30):
    """Sends a call; the reply is logged (with its time) when it arrives."""
    done = {}
    def ok(*r): done['r'] = ('OK', str(r)[:200]); p('REPLY', label, done['r'])
    def err(e): done['r'] = ('ERR', e.get_dbus_name(), e.get_dbus_message()); p('REPLY', label, done['r'])
    p('SEND', label, method)
    getattr(dbus.Interface(obj(path), iface), method)(*args, reply_handler=ok, error_handler=err, timeout=timeout)
    return done
def call(label, path, iface, method, *args, timeout=30):
    done = start(label, path, iface, method, *args, timeout=timeout)
    spin(timeout + 1, lambda: 'r' in done)
    return done.get('r')
def prop(path, iface, name):
    try: return obj(path).Get(iface, name, dbus_interface='org.freedesktop.DBus.Properties')
    except dbus.exceptions.DBusException as e: return ('ERR', e.get_dbus_name())
def managed(): return obj('/').GetManagedObjects(dbus_interface='org.freedesktop.DBus.ObjectManager')
A = '/org/bluez/hci0'; AD = 'org.bluez.Adapter1'; DV = 'org.bluez.Device1'; CH = 'org.bluez.GattCharacteristic1'
DEV = A + '/dev_00_AA_01_01_00_01'
def o(d): return dbus.Dictionary(d, signature='sv')
def find():
    for attempt in range(5):
        call('filter', A, AD, 'SetDiscoveryFilter', o({'Transport': 'le'}))
        call('start', A, AD, 'StartDiscovery')
        found = spin(11, lambda: DEV in managed())
        call('stop', A, AD, 'StopDiscovery')
        p('found', found, 'attempt', attempt)
        if found: return True
        spin(1)
    return False
def connect():
    call('connect', DEV, DV, 'Connect')
    p('resolved', spin(20, lambda: prop(DEV, DV, 'ServicesResolved') == True))
    m = managed()
    return {str(i[CH]['UUID'])[4:8]: str(pth) for pth, i in m.items() if CH in i}

find()
chars = connect()
call('notify', chars['2a37'], CH, 'StartNotify'); spin(2)
p('--- Disconnect with a notification session, reading 2a38 every 0.25 s meanwhile')
d = start('disconnect-1', DEV, DV, 'Disconnect')
reads = 0
while 'r' not in d and reads < 40:
    call('read-during-disconnect-%d' % reads, chars['2a38'], CH, 'ReadValue', o({}), timeout=5)
    reads += 1; spin(0.25)
spin(3)
p('Connected', prop(DEV, DV, 'Connected'), 'ServicesResolved', prop(DEV, DV, 'ServicesResolved'))
spin(1)
chars = connect()
p('--- Disconnect without notification sessions')
call('disconnect-2', DEV, DV, 'Disconnect')
spin(3)
p('Connected', prop(DEV, DV, 'Connected'))
p('done')
