#!/usr/bin/env python3
"""An MQTT command burst against a gateway, and what HTTP clients see
meanwhile.

Starts mosquitto and `blegateway serve --simulate --mqtt … --mqtt-commands`,
publishes COUNT `cmd/connect` commands for absent addresses as fast as
`mosquitto_pub -l` sends them, and polls GET /health every 10 ms on one
keep-alive connection from before the burst until every command is
answered, after polling it for QUIET seconds with nothing else going on.
Prints the burst's duration, the answers by status, the slowest and the
median /health before and during the burst, and the gateway's peak RSS;
with --json, one JSON object instead (what `make bench`'s burst phase
reads).

    scripts/mqtt-command-burst.py [BINARY] [--count 10000] [--timeout-ms 2000] [--quiet 5] [--json]

BINARY defaults to .build/release/blegateway. Not a test: the figures
depend on the machine and its load.
"""

import argparse
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from rate_rig import free_port, wait_for_listener


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default=".build/release/blegateway")
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--timeout-ms", type=int, default=2000)
    parser.add_argument("--quiet", type=float, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    directory = tempfile.mkdtemp(prefix="mqtt-burst-")
    broker_port, http_port = free_port(), free_port()
    with open(os.path.join(directory, "mosquitto.conf"), "w") as conf:
        conf.write(f"listener {broker_port} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 100000\n")
        if os.getuid() == 0:
            conf.write("user root\n")
    broker = subprocess.Popen(["mosquitto", "-c", os.path.join(directory, "mosquitto.conf")], stderr=subprocess.DEVNULL)
    wait_for_listener(broker_port)
    gateway = subprocess.Popen(
        [
            args.binary,
            "serve",
            "--simulate",
            "--listen",
            f"127.0.0.1:{http_port}",
            "--log-level",
            "warning",
            "--mqtt",
            f"mqtt://127.0.0.1:{broker_port}",
            "--gateway-id",
            "burst",
            "--mqtt-commands",
        ],
        stderr=open(os.path.join(directory, "gateway.log"), "w"),
    )
    replies = None
    try:
        wait_for_listener(http_port)
        time.sleep(1)
        replies = subprocess.Popen(
            ["mosquitto_sub", "-p", str(broker_port), "-V", "mqttv5", "-t", "blegateway/replies/burst", "-F", "%P"],
            stdout=subprocess.PIPE,
            text=True,
        )
        time.sleep(0.5)
        latencies = []
        peak_rss = [rss_kib(gateway.pid)]
        done = threading.Event()

        def poll_health():
            connection = http.client.HTTPConnection("127.0.0.1", http_port, timeout=120)
            while not done.is_set():
                started = time.monotonic()
                connection.request("GET", "/health")
                connection.getresponse().read()
                latencies.append(time.monotonic() - started)
                peak_rss[0] = max(peak_rss[0], rss_kib(gateway.pid))
                time.sleep(0.01)

        poller = threading.Thread(target=poll_health)
        poller.start()
        time.sleep(args.quiet)
        quiet = list(latencies)
        latencies.clear()
        lines = "".join(
            f'{{"address":"00:00:00:{i >> 16 & 255:02X}:{i >> 8 & 255:02X}:{i & 255:02X}",'
            f'"timeout_ms":{args.timeout_ms}}}\n'
            for i in range(args.count)
        )
        started = time.monotonic()
        subprocess.run(
            [
                "mosquitto_pub",
                "-p",
                str(broker_port),
                "-V",
                "mqttv5",
                "-q",
                "1",
                "-t",
                "blegateway/burst/cmd/connect",
                "-D",
                "publish",
                "response-topic",
                "blegateway/replies/burst",
                "-l",
            ],
            input=lines,
            text=True,
            check=True,
        )
        sent = time.monotonic() - started
        statuses = {}
        answered = 0
        deadline = time.monotonic() + 600
        for line in replies.stdout:
            match = re.search(r"status:(\d+)", line)
            status = match.group(1) if match else "?"
            statuses[status] = statuses.get(status, 0) + 1
            answered += 1
            if answered >= args.count or time.monotonic() > deadline:
                break
        all_answered = time.monotonic() - started
        time.sleep(1)
        done.set()
        poller.join()
        result = {
            "commands": args.count,
            "sent_s": round(sent, 2),
            "answered": answered,
            "answered_s": round(all_answered, 1),
            "statuses": statuses,
            "health_quiet": {
                "requests": len(quiet),
                "median_ms": round(statistics.median(quiet) * 1000, 2),
                "slowest_ms": round(max(quiet) * 1000, 2),
            },
            "health_burst": {
                "requests": len(latencies),
                "median_ms": round(statistics.median(latencies) * 1000, 2),
                "slowest_ms": round(max(latencies) * 1000, 2),
            },
            "peak_rss_mib": round(peak_rss[0] / 1024, 1),
        }
        if args.json:
            print(json.dumps(result))
        else:
            print(
                f"commands: {args.count} sent in {sent:.2f} s, {answered} answered in {all_answered:.1f} s: "
                + ", ".join(f"{status} x{count}" for status, count in sorted(statuses.items()))
            )
            for name in ("quiet", "burst"):
                figures = result[f"health_{name}"]
                print(
                    f"GET /health, {name}: {figures['requests']} requests, median {figures['median_ms']} ms, "
                    f"slowest {figures['slowest_ms']} ms"
                )
            print(f"gateway RSS: peak {result['peak_rss_mib']} MiB")
    finally:
        for process in (replies, gateway, broker):
            if process and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
