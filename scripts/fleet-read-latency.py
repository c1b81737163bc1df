#!/usr/bin/env python3
"""The latency a fleet-forwarded read (and browse, and descriptor read)
adds to a direct one.

Starts mosquitto and two `blegateway serve --simulate SCENARIO --mqtt …
--mqtt-commands` (ids `near` and `far`), each over its own simulator; only
`near`'s scenario has the device. Connects the device through `near`, then
reads its characteristic COUNT times directly on `near`
(GET /v1/devices/…/value) and COUNT times through `far`
(GET /v1/fleet/devices/…/value, carried over the broker to `near`),
alternating, each on one keep-alive connection; then the same for the
GATT browse (GET …/services) and a descriptor read (GET
…/descriptors/2901/value). Prints the median (p50), p90 and slowest of
each and the difference of the medians; with --json, one JSON object
instead (the read's figures at the top, as before; `services` and
`descriptor` beside them).

    scripts/fleet-read-latency.py [BINARY] [--count 200] [--json]

BINARY defaults to .build/release/blegateway. Not a test: the figures
depend on the machine and its load.
"""

import argparse
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from rate_rig import free_port, wait_for_listener

DEVICE = "C4:7C:8D:6A:40:01"
SCENARIO = """timing: 1
adapters:
  - id: hci0
    address: "00:1A:7D:DA:73:1{index}"
devices:
{devices}
"""
DEVICE_YAML = f"""  - address: "{DEVICE}"
    name: Fleet bench
    rssi: -50
    advertising:
      interval: 0.1
      uuids: ["180f"]
    connection:
      delay: 0.1
      resolveDelay: 0.1
    services:
      - uuid: "180f"
        characteristics:
          - uuid: "2a19"
            flags: [read]
            value: "64"
            descriptors:
              - uuid: "2901"
                text: Battery level
"""


def request(
    connection: http.client.HTTPConnection, method: str, path: str, body: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    return response.status, dict(response.getheaders()), response.read()


def figures(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "reads": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p90_ms": round(ordered[int(len(ordered) * 0.9) - 1] * 1000, 2),
        "slowest_ms": round(ordered[-1] * 1000, 2),
    }


def measure(
    near: http.client.HTTPConnection, far: http.client.HTTPConnection, path: str, operation: str, count: int
) -> tuple[list[float], list[float]]:
    """`count` GETs of `path` on `near` (under /v1) alternating with as
    many through `far` (under /v1/fleet), after 10 of each not counted."""
    direct: list[float] = []
    forwarded: list[float] = []
    for _ in range(10):  # warm-up, not counted
        request(near, "GET", "/v1" + path)
        request(far, "GET", "/v1/fleet" + path)
    for _ in range(count):
        started = time.monotonic()
        status, _, body = request(near, "GET", "/v1" + path)
        direct.append(time.monotonic() - started)
        if status != 200:
            raise SystemExit(f"direct {operation}: {status} {body[:300]!r}")
        started = time.monotonic()
        status, headers, body = request(far, "GET", "/v1/fleet" + path)
        forwarded.append(time.monotonic() - started)
        if status != 200 or headers.get("Gateway") != "near":
            raise SystemExit(f"fleet {operation}: {status} {headers} {body[:300]!r}")
    return direct, forwarded


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default=".build/release/blegateway")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    directory = tempfile.mkdtemp(prefix="fleet-latency-")
    broker_port = free_port()
    with open(os.path.join(directory, "mosquitto.conf"), "w") as conf:
        conf.write(f"listener {broker_port} 127.0.0.1\nallow_anonymous true\nset_tcp_nodelay true\n")
        if os.getuid() == 0:
            conf.write("user root\n")
    processes: list[subprocess.Popen[bytes]] = [
        subprocess.Popen(["mosquitto", "-c", os.path.join(directory, "mosquitto.conf")], stderr=subprocess.DEVNULL)
    ]
    try:
        wait_for_listener(broker_port)
        ports: dict[str, int] = {}
        for index, name in enumerate(["near", "far"]):
            scenario = os.path.join(directory, f"{name}.yaml")
            with open(scenario, "w") as file:
                file.write(SCENARIO.format(index=index, devices=DEVICE_YAML if name == "near" else "  []"))
            ports[name] = free_port()
            processes.append(
                subprocess.Popen(
                    [
                        args.binary,
                        "serve",
                        "--simulate",
                        scenario,
                        "--listen",
                        f"127.0.0.1:{ports[name]}",
                        "--log-level",
                        "warning",
                        "--mqtt",
                        f"mqtt://127.0.0.1:{broker_port}",
                        "--gateway-id",
                        name,
                        "--mqtt-commands",
                    ],
                    stderr=open(os.path.join(directory, f"{name}.log"), "w"),
                )
            )
        for port in ports.values():
            wait_for_listener(port)
        near = http.client.HTTPConnection("127.0.0.1", ports["near"], timeout=60)
        far = http.client.HTTPConnection("127.0.0.1", ports["far"], timeout=60)
        request(near, "POST", "/v1/scan", body='{"duration_ms":2000}')
        status, _, body = request(near, "POST", f"/v1/devices/{DEVICE}/connect?timeout_ms=20000")
        if status != 200:
            raise SystemExit(f"connect: {status} {body[:300]!r}")
        # `far` must see near's retained connection before its first read.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            _, _, body = request(far, "GET", f"/v1/fleet/devices/{DEVICE}")
            if b'"connected_on":["near"]' in body:
                break
            time.sleep(0.1)
        else:
            raise SystemExit(f"far never saw the connection: {body[:300]!r}")
        operations = {
            "read": f"/devices/{DEVICE}/characteristics/2a19/value",
            "services": f"/devices/{DEVICE}/services",
            "descriptor": f"/devices/{DEVICE}/characteristics/2a19/descriptors/2901/value",
        }
        measured: dict[str, dict[str, object]] = {}
        for operation, path in operations.items():
            direct, forwarded = measure(near, far, path, operation, args.count)
            measured[operation] = {
                "direct": figures(direct),
                "fleet": figures(forwarded),
                "added_p50_ms": round(figures(forwarded)["p50_ms"] - figures(direct)["p50_ms"], 2),
            }
        result: dict[str, object] = dict(measured["read"])
        result["services"] = measured["services"]
        result["descriptor"] = measured["descriptor"]
        if args.json:
            print(json.dumps(result))
        else:
            for operation, figures_of in measured.items():
                for name in ("direct", "fleet"):
                    f = figures_of[name]
                    assert isinstance(f, dict)
                    print(
                        f"{operation:10} {name:7} {f['reads']}: p50 {f['p50_ms']} ms, p90 {f['p90_ms']} ms, "
                        f"slowest {f['slowest_ms']} ms"
                    )
                print(f"{operation:10} added by the fleet (p50): {figures_of['added_p50_ms']} ms")
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
