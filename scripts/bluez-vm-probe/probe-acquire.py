#!/usr/bin/python3 -u
# Fourth probe of the real bluetoothd 5.66: AcquireNotify and AcquireWrite
# (the fd-based paths of GattCharacteristic1) against StartNotify, on the
# example server's Heart Rate Measurement (2a37, notifies once a second) and
# on fast-peripheral.py's characteristics (f00d0001: notify, write without
# response; f00d0002: indicate). Then both paths side by side: bursts at
# rising rates, every value's latency (the peripheral stamps CLOCK_MONOTONIC
# in it) and how many arrived. Writes probe4.log, signals4.log and
# rates.json under argv[1].
import errno
import itertools
import json
import os
import select
import socket
import struct
import time

import dbus

from probelib import CH, DEV, DV, OUT, bus, call, connect, ctx, find, jsonable, managed, o, open_logs, p, prop, spin


def changed(member, path, args):
    if member == "PropertiesChanged" and "char" in path and "Value" not in str(args[1]):
        p("SIGNAL", path[-20:], jsonable(args[1]), jsonable(args[2]))


open_logs("probe4.log", "signals4.log", changed)


def sync(label, path, method, *args, b=None):
    """A blocking call: ('OK', values) or ('ERR', name, message)."""
    try:
        r = getattr(dbus.Interface((b or bus).get_object("org.bluez", path), CH), method)(*args)
        p(label, method, "OK", [type(x).__name__ for x in (r if isinstance(r, tuple) else (r,))])
        return ("OK", r)
    except dbus.exceptions.DBusException as e:
        p(label, method, "ERR", e.get_dbus_name(), e.get_dbus_message())
        return ("ERR", e.get_dbus_name(), e.get_dbus_message())


def error_name(e):
    """The errno name of a failed system call's OSError (which always carries an errno)."""
    return errno.errorcode[e.errno] if e.errno is not None else str(e)


def describe(fd):
    s = socket.socket(fileno=os.dup(fd))
    kinds = {
        socket.SOCK_SEQPACKET: "SOCK_SEQPACKET",
        socket.SOCK_STREAM: "SOCK_STREAM",
        socket.SOCK_DGRAM: "SOCK_DGRAM",
    }
    import fcntl

    nonblocking = bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK)
    d = f"family {s.family!s} type {kinds.get(s.type, s.type)!s} O_NONBLOCK {nonblocking}"
    s.close()
    return d


def acquire(label, path, method="AcquireNotify", b=None):
    r = sync(label, path, method, o({}), b=b)
    if r[0] != "OK":
        return None, None
    fd, mtu = r[1][0].take(), int(r[1][1])
    p(label, "fd", fd, describe(fd), "mtu", mtu)
    return fd, mtu


def reads(fd, n, timeout=3.0):
    """What n reads return: each one's length and bytes, or what ended it."""
    for i in range(n):
        ready = select.poll()
        ready.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        ev = ready.poll(timeout * 1000)
        if not ev:
            p("  read", i, "nothing within", timeout, "s")
            return
        flags = ev[0][1]
        try:
            data = os.read(fd, 1024)
        except OSError as e:
            p("  read", i, "poll", flags, "error", error_name(e))
            return
        p("  read", i, "poll", flags, "len", len(data), data.hex())
        if not data:
            return


find()
chars = connect()
hr = chars["2a37"]
fast = [pth for pth, i in managed().items() if CH in i and str(i[CH]["UUID"]).startswith("f00d0001")]
ind = [pth for pth, i in managed().items() if CH in i and str(i[CH]["UUID"]).startswith("f00d0002")]
p("fast", fast, "indicate", ind)
for c in [hr, *fast, *ind]:
    p("props", c[-20:], {k: prop(c, CH, k) for k in ("Flags", "NotifyAcquired", "WriteAcquired", "Notifying", "MTU")})

p("--- AcquireNotify on 2a37: the reply, reads per notification")
fd, mtu = acquire("hr-acquire", hr)
reads(fd, 3)
p("props", {k: prop(hr, CH, k) for k in ("NotifyAcquired", "Notifying")})
p("--- while acquired: StartNotify, a second AcquireNotify, both from another client too")
sync("same-client", hr, "StartNotify")
sync("same-client", hr, "AcquireNotify", o({}))
bus2 = dbus.SystemBus(private=True)
sync("other-client", hr, "StartNotify", b=bus2)
sync("other-client", hr, "AcquireNotify", o({}), b=bus2)
sync("same-client", hr, "StopNotify")
p("--- the client closes the fd")
os.close(fd)
spin(2)
p("props", {k: prop(hr, CH, k) for k in ("NotifyAcquired", "Notifying")})
p("--- StartNotify held, then AcquireNotify")
sync("start", hr, "StartNotify")
spin(1.5)
sync("start-held", hr, "AcquireNotify", o({}))
sync("other-client", hr, "AcquireNotify", o({}), b=bus2)
sync("start", hr, "StopNotify")
spin(1)
p("props", {k: prop(hr, CH, k) for k in ("NotifyAcquired", "Notifying")})
if ind:
    p("--- AcquireNotify on an indicate-only characteristic, on a read-only one")
    sync("indicate", ind[0], "AcquireNotify", o({}))
sync("read-only", chars["2a38"], "AcquireNotify", o({}))
sync("read-only", chars["2a38"], "AcquireWrite", o({}))
if fast:
    f = fast[0]
    p("--- AcquireWrite on f00d0001 (write without response)")
    wfd, wmtu = acquire("write-acquire", f, "AcquireWrite")
    p("props", {k: prop(f, CH, k) for k in ("WriteAcquired",)})
    sync("write-acquired", f, "AcquireWrite", o({}))
    if wfd is not None:
        for size in (1, 4, wmtu - 3, wmtu - 2, wmtu, wmtu + 1):
            try:
                p("  write", size, "bytes ->", os.write(wfd, bytes(range(256))[:1] * size))
            except OSError as e:
                p("  write", size, "bytes -> error", error_name(e))
        spin(1)
        sync("write-while-acquired", f, "WriteValue", dbus.Array([7], signature="y"), o({"type": "command"}))
        os.close(wfd)
        spin(1)
        p("props", {k: prop(f, CH, k) for k in ("WriteAcquired",)})


def percentile(ordered, q):
    """The value at fraction q of an ascending list; None for an empty one."""
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else None


def burst(path, mode, count, rate):
    """count values at rate through mode: (received, lost, out-of-order, latencies in µs)."""
    got = []
    if mode == "acquire":
        fd, _ = acquire("burst", path)
        if fd is None:
            return None
    else:

        def sig(interface, changed, invalidated, path=None):
            if "Value" in changed:
                got.append((time.monotonic_ns(), bytes(changed["Value"])))

        bus.add_signal_receiver(
            sig, "PropertiesChanged", "org.freedesktop.DBus.Properties", "org.bluez", path, path_keyword="path"
        )
        sync("burst", path, "StartNotify")
    spin(0.5)
    call(
        "trigger",
        path,
        CH,
        "WriteValue",
        dbus.Array(struct.pack("<II", count, rate), signature="y"),
        o({"type": "request"}),
    )
    deadline = time.time() + count / rate + 5
    while time.time() < deadline and len(got) < count:
        if mode == "acquire":
            ready = select.poll()
            ready.register(fd, select.POLLIN)
            if ready.poll(50):
                got.append((time.monotonic_ns(), os.read(fd, 64)))
        else:
            ctx.iteration(False) or time.sleep(0.0005)
    if mode == "acquire":
        os.close(fd)
    else:
        bus.remove_signal_receiver(sig, "PropertiesChanged", "org.freedesktop.DBus.Properties", "org.bluez", path)
        sync("burst", path, "StopNotify")
    spin(0.5)
    seqs = [struct.unpack("<IQ", v[:12])[0] for _, v in got if len(v) >= 12]
    lat = sorted((t - struct.unpack("<IQ", v[:12])[1]) // 1000 for t, v in got if len(v) >= 12)
    disorder = sum(1 for a, b in itertools.pairwise(seqs) if b <= a)
    r = {
        "mode": mode,
        "rate": rate,
        "count": count,
        "received": len(seqs),
        "lost": count - len(set(seqs)),
        "disorder": disorder,
        "p50_us": percentile(lat, 0.5),
        "p99_us": percentile(lat, 0.99),
    }
    p("BURST", json.dumps(r))
    return r


results = []
if fast:
    for rate in (100, 250, 500, 1000, 2000, 4000):
        for mode in ("start-notify", "acquire"):
            r = burst(fast[0], mode, max(200, rate * 2), rate)
            if r:
                results.append(r)
json.dump(results, open(OUT + "/rates.json", "w"), indent=1)

p("--- AcquireNotify held while the device disconnects")
fd, _ = acquire("hr-acquire", hr)
call("disconnect", DEV, DV, "Disconnect")
if fd is not None:
    reads(fd, 6, timeout=3)
    os.close(fd)
spin(1)
p("props", {k: prop(hr, CH, k) for k in ("NotifyAcquired", "Notifying")})
p("--- AcquireNotify while disconnected")
sync("disconnected", hr, "AcquireNotify", o({}))
p("done")
