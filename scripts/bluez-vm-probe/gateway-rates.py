#!/usr/bin/python3 -u
# The gateway's notification path on the real bluetoothd, run in the guest
# by `run.sh gateway-rates` (twice: --notify-path start-notify, then
# acquire): finds and connects fast-peripheral.py's device through the HTTP
# API, opens the notification stream of f00d0001, and asks the peripheral
# for bursts at rising rates (a write of count and rate). Each value carries
# its sequence number and the peripheral's CLOCK_MONOTONIC at sending; this
# reader, in the same guest, stamps each SSE event on arrival: latency and
# loss per rate. Writes one JSON line per rate to argv[3].
#   gateway-rates.py BASE-URL NOTIFY-PATH OUT.json
import http.client
import itertools
import json
import struct
import sys
import threading
import time
import urllib.parse
import urllib.request

BASE, MODE, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
DEV = BASE + "/v1/devices/00:AA:01:01:00:01"
FAST = "f00d0001-0000-4000-8000-00000000f00d"


def request(method, url, body=None, timeout=60):
    data = json.dumps(body).encode() if body is not None else None
    r = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(r, timeout=timeout) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


for _attempt in range(5):
    status, body = request("POST", BASE + "/v1/scan", {"duration_ms": 11000, "services": ["180d"]})
    if "00:AA:01:01:00:01" in body:
        break
print("scan", status, flush=True)
print("connect", request("POST", DEV + "/connect", {"timeout_ms": 30000})[0], flush=True)

received: list[tuple[int, bytes]] = []  # (arrival ns, payload bytes)
ready = threading.Event()


def reader():
    u = urllib.parse.urlparse(BASE)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    c.request(
        "GET",
        f"/v1/devices/00:AA:01:01:00:01/characteristics/{FAST}/notifications",
        headers={"Accept": "text/event-stream"},
    )
    r = c.getresponse()
    print("stream", r.status, flush=True)
    ready.set()
    event = None
    while True:
        line = r.fp.readline()
        if not line:
            return
        line = line.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event == "notification":
            received.append((time.monotonic_ns(), bytes.fromhex(json.loads(line[6:])["value"])))


threading.Thread(target=reader, daemon=True).start()
ready.wait(30)
time.sleep(2)
print("characteristic", request("GET", DEV + "/characteristics/" + FAST)[1], flush=True)


def drain():
    """Waits until nothing has arrived for 2 s (a slow guest may still be
    delivering the previous burst), then forgets what came."""
    while True:
        seen = len(received)
        time.sleep(2)
        if len(received) == seen:
            break
    received.clear()


def percentile(ordered, q):
    """The value at fraction q of an ascending list; None for an empty one."""
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else None


out = open(OUT, "w")
for rate in (50, 100, 200, 400, 800, 1600, 3200):
    count = max(200, rate * 2)
    drain()
    request("PUT", DEV + f"/characteristics/{FAST}/value", {"value": struct.pack("<II", count, rate).hex()})
    deadline = time.time() + count / rate + 8
    while time.time() < deadline and len(received) < count:
        time.sleep(0.05)
    time.sleep(1)
    got = list(received)
    seqs = [struct.unpack("<IQ", v[:12])[0] for _, v in got if len(v) >= 12]
    lat = sorted((t - struct.unpack("<IQ", v[:12])[1]) // 1000 for t, v in got if len(v) >= 12)
    r = {
        "path": MODE,
        "rate": rate,
        "count": count,
        "received": len(seqs),
        "lost": count - len(set(seqs)),
        "disorder": sum(1 for a, b in itertools.pairwise(seqs) if b <= a),
        "p50_us": percentile(lat, 0.5),
        "p99_us": percentile(lat, 0.99),
    }
    print(json.dumps(r), flush=True)
    out.write(json.dumps(r) + "\n")
    out.flush()
    if r["lost"] > 0:
        break  # the highest zero-loss rate is behind us
request("POST", DEV + "/disconnect")
