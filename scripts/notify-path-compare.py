#!/usr/bin/env python3
"""StartNotify against AcquireNotify on the simulator: one notification
stream through the gateway, its loss and the CPU it costs, per path and rate.

For each rate and each `--notify-path` (start-notify, acquire), a
`blegateway serve --simulate` whose device notifies a 4-byte counter at that
rate; one `curl -N` on GET …/notifications takes the values for DURATION
seconds (after one second to settle). A value is lost when the counter skips
it. CPU is the gateway process's (which runs the simulator too: on the
StartNotify path it sends a PropertiesChanged per value, on the fd path a
packet) and its private dbus-daemon's, per value received.

    scripts/notify-path-compare.py [BINARY] [--duration S] [--rates 1000,2000,...]

BINARY defaults to .build/release/blegateway. Needs curl and dbus-daemon.
Not a test: the figures depend on the machine and its load. Latency is
measured on the real bluetoothd (scripts/bluez-vm-probe/run.sh
gateway-rates), where the peripheral stamps its clock into each value.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from rate_rig import DEVICE, UUID, connect_device, scenario, wait_for_port

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User + system CPU of a process; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return (int(fields[11]) + int(fields[12])) / TICK


def dbus_daemons():
    pids = set()
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and open(f"/proc/{entry}/comm").read().strip() == "dbus-daemon":
                pids.add(int(entry))
        except OSError:
            pass
    return pids


def measure(binary, path, rate, duration, directory):
    scenario_path = os.path.join(directory, f"scenario-{rate}.yaml")
    with open(scenario_path, "w") as f:
        f.write(scenario(rate))
    log_path = os.path.join(directory, f"gateway-{path}-{rate}.log")
    before = dbus_daemons()
    gateway = subprocess.Popen(
        [
            binary,
            "serve",
            "--simulate",
            scenario_path,
            "--listen",
            "127.0.0.1:0",
            "--log-level",
            "notice",
            "--notify-path",
            path,
        ],
        stderr=open(log_path, "w"),
    )
    try:
        http = f"http://127.0.0.1:{wait_for_port(gateway, log_path)}"
        # The private bus of --simulate (started through a shell, so not a
        # child): the newest dbus-daemon that appeared meanwhile.
        bus = sorted(dbus_daemons() - before)[-1:]
        connect_device(http)
        sse_path = os.path.join(directory, f"sse-{path}-{rate}.txt")
        sse = subprocess.Popen(
            ["curl", "-sN", f"{http}/v1/devices/{DEVICE}/characteristics/{UUID}/notifications"],
            stdout=open(sse_path, "w"),
        )
        time.sleep(1)
        start_size = os.path.getsize(sse_path)
        start = (cpu_seconds(gateway.pid), sum(cpu_seconds(p) for p in bus))
        time.sleep(duration)
        end = (cpu_seconds(gateway.pid), sum(cpu_seconds(p) for p in bus))
        end_size = os.path.getsize(sse_path)
        sse.send_signal(signal.SIGINT)
        sse.wait(timeout=10)
        with open(sse_path) as f:
            f.seek(start_size)
            window = f.read(end_size - start_size)
    finally:
        gateway.send_signal(signal.SIGTERM)
        gateway.wait(timeout=30)
    values = [
        int.from_bytes(bytes.fromhex(m), "little")
        for m in re.findall(r'^data: .*"value":"([0-9a-f]{8})"', window, re.M)
    ]
    lost = (max(values) - min(values) + 1 - len(set(values))) if values else 0
    received = len(values)
    return {
        "path": path,
        "rate": rate,
        "received": received,
        "per_s": round(received / duration),
        "lost": lost,
        "gateway_cpu_pct": round((end[0] - start[0]) / duration * 100),
        "bus_cpu_pct": round((end[1] - start[1]) / duration * 100),
        "gateway_us_per_value": round((end[0] - start[0]) / max(1, received) * 1e6, 1),
        "bus_us_per_value": round((end[1] - start[1]) / max(1, received) * 1e6, 1),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default=".build/release/blegateway")
    parser.add_argument("--duration", type=float, default=5)
    parser.add_argument("--rates", default="500,1000,2000,4000")
    parser.add_argument("--repeat", type=int, default=1)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        print("| rate asked | path | values/s | lost | gateway CPU % | µs/value | dbus-daemon CPU % | µs/value |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|")
        for rate in [int(r) for r in arguments.rates.split(",")]:
            for _ in range(arguments.repeat):
                for path in ("start-notify", "acquire"):
                    r = measure(arguments.binary, path, rate, arguments.duration, directory)
                    print(
                        f"| {rate} | {path} | {r['per_s']} | {r['lost']} | {r['gateway_cpu_pct']} | "
                        f"{r['gateway_us_per_value']} | {r['bus_cpu_pct']} | {r['bus_us_per_value']} |",
                        flush=True,
                    )


if __name__ == "__main__":
    sys.exit(main())
