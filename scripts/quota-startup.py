#!/usr/bin/env python3
"""Start-up and shutdown of a gateway holding what the default quotas
allow: 32 kept devices (all absent: each keeps trying to connect), 256
standing subscriptions, 16 peripheral applications and as many
advertisements as the adapter takes (the simulator's 5 instances; a
Raspberry Pi's controller offers about as many).

    scripts/quota-startup.py [BINARY] [--runs N]

BINARY defaults to .build/debug/blegateway. It fills a state directory
through the HTTP API (from 127.0.0.1 and 127.0.0.2, since a client may hold
half of each total), then stops and starts the gateway N times on it
(`--simulate` with the same directory) and prints, for each run: the time
from exec to "listening" (the gateway listens once the restore is done),
and from SIGTERM to exit. Not a test: the figures depend on the
machine and its load.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from rate_rig import wait_for_port


def request(method: str, url: str, body: object = None, source: str | None = None) -> int:
    """One request with curl (which can bind a source address)."""
    command = ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", method]
    if source:
        command += ["--interface", source]
    if body is not None:
        command += ["-H", "Content-Type: application/json", "--data-binary", json.dumps(body)]
    return int(subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout)


def start(binary: str, state: str, log_path: str) -> tuple[subprocess.Popen[bytes], int, float]:
    began = time.monotonic()
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [binary, "serve", "--simulate", "--state-dir", state, "--listen", "127.0.0.1:0", "--log-level", "info"],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    port: int = wait_for_port(process, log_path)  # type: ignore[no-untyped-call]
    return process, port, time.monotonic() - began


def stop(process: subprocess.Popen[bytes]) -> tuple[float, int]:
    began = time.monotonic()
    process.send_signal(signal.SIGTERM)
    status = process.wait(timeout=120)
    return time.monotonic() - began, status


def fill(base: str) -> dict[str, int]:
    counts = {"kept": 0, "subscriptions": 0, "applications": 0, "advertisements": 0}
    for client, source in enumerate(["127.0.0.1", "127.0.0.2"]):
        for index in range(16):
            address = f"AA:00:00:00:{client:02X}:{index:02X}"
            counts["kept"] += request("PUT", f"{base}/v1/devices/{address}/keep", source=source) == 201
        for index in range(128):
            subscription = {"device": f"BB:00:00:00:{client:02X}:{index:02X}", "characteristic": "2a37"}
            counts["subscriptions"] += request("POST", f"{base}/v1/subscriptions", subscription, source) == 201
        heart_rate = {"uuid": "2a37", "flags": ["read", "notify"]}
        application = {"services": [{"uuid": "180d", "characteristics": [heart_rate]}]}
        for _ in range(8):
            counts["applications"] += request("POST", f"{base}/v1/peripheral/applications", application, source) == 201
        for index in range(8):
            advertisement = {"local_name": f"q{client}{index}"}
            status = request("POST", f"{base}/v1/peripheral/advertisements", advertisement, source)
            counts["advertisements"] += status == 201
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", nargs="?", default=".build/debug/blegateway")
    parser.add_argument("--runs", type=int, default=3)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="quota-startup-") as directory:
        state = os.path.join(directory, "state")
        log_path = os.path.join(directory, "gateway.log")
        process, port, _ = start(arguments.binary, state, log_path)
        counts = fill(f"http://127.0.0.1:{port}")
        print("held:", ", ".join(f"{value} {name}" for name, value in counts.items()))
        stopped, status = stop(process)
        print(f"filled run: stop {stopped * 1000:.0f} ms (exit {status})")
        for run in range(1, arguments.runs + 1):
            process, port, listening = start(arguments.binary, state, log_path)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/subscriptions") as answer:
                held = len(json.load(answer))
            stopped, status = stop(process)
            print(
                f"run {run}: listening {listening * 1000:.0f} ms with {held} subscriptions restored,"
                f" stop {stopped * 1000:.0f} ms (exit {status})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
