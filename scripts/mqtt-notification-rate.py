#!/usr/bin/env python3
"""Notifications per second from the simulator through the gateway to an
MQTT subscriber (QoS 0 and 1), beside the same notifications on the SSE
stream, and what was lost on each path.

For each rate, a `blegateway serve --simulate` whose device notifies a
4-byte counter at that rate; one `mosquitto_sub` on the value topic and one
`curl -N` on GET …/notifications take the values for DURATION seconds. A
value is lost when the counter skips it.

    scripts/mqtt-notification-rate.py [BINARY] [--duration S] [--rates 1000,2000,...]

BINARY defaults to .build/release/blegateway. Needs mosquitto, mosquitto_sub,
mosquitto_pub, curl and dbus-daemon. Not a test: the figures depend on the
machine and its load.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime

from rate_rig import DEVICE, UUID, connect_device, scenario, wait_for_port


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def counter(hex_value):
    return int.from_bytes(bytes.fromhex(hex_value), "little")


def loss(values):
    if not values:
        return 0, 0
    distinct = set(values)
    expected = max(distinct) - min(distinct) + 1
    return len(values), expected - len(distinct)


def summary(events):
    """How many values arrived, how many the counter skipped, and the rate
    over the values' own timestamps (when the gateway read them)."""
    if len(events) < 2:
        return len(events), 0, 0
    received, lost = loss([counter(event["value"]) for event in events])
    stamps = [datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp() for event in events]
    span = max(stamps) - min(stamps)
    return received, lost, round((received - 1) / span) if span > 0 else 0


def measure(binary, broker_port, rate, qos, duration, directory):
    path = os.path.join(directory, f"scenario-{rate}.yaml")
    with open(path, "w") as f:
        f.write(scenario(rate))
    log_path = os.path.join(directory, f"gateway-{rate}-{qos}.log")
    gateway = subprocess.Popen(
        [
            binary,
            "serve",
            "--simulate",
            path,
            "--listen",
            "127.0.0.1:0",
            "--log-level",
            "notice",
            "--mqtt",
            f"mqtt://127.0.0.1:{broker_port}",
            "--gateway-id",
            "bench",
            "--mqtt-qos",
            str(qos),
            "--mqtt-commands",
        ],
        stderr=open(log_path, "w"),
    )
    try:
        http = f"http://127.0.0.1:{wait_for_port(gateway, log_path)}"
        connect_device(http)
        mqtt_path = os.path.join(directory, f"mqtt-{rate}-{qos}.txt")
        sse_path = os.path.join(directory, f"sse-{rate}-{qos}.txt")
        topic = f"blegateway/bench/devices/{DEVICE}/characteristics/{UUID}"
        sub = subprocess.Popen(
            ["mosquitto_sub", "-p", str(broker_port), "-q", str(qos), "-t", topic, "-F", "%p"],
            stdout=open(mqtt_path, "w"),
        )
        time.sleep(0.5)
        subprocess.run(
            [
                "mosquitto_pub",
                "-p",
                str(broker_port),
                "-V",
                "mqttv5",
                "-t",
                "blegateway/bench/cmd/subscribe",
                "-m",
                json.dumps({"address": DEVICE, "characteristic": UUID}),
            ],
            check=True,
        )
        sse = subprocess.Popen(
            ["curl", "-sN", f"{http}/v1/devices/{DEVICE}/characteristics/{UUID}/notifications"],
            stdout=open(sse_path, "w"),
        )
        # Let both paths settle before counting.
        time.sleep(1)
        time.sleep(duration)
        for process in (sub, sse):
            process.send_signal(signal.SIGINT)
        for process in (sub, sse):
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        mqtt_out = open(mqtt_path).read()
        sse_out = open(sse_path).read()
    finally:
        gateway.send_signal(signal.SIGTERM)
        gateway.wait(timeout=30)
    mqtt_events = [json.loads(line) for line in mqtt_out.splitlines() if line.startswith("{")]
    sse_events = [
        json.loads(line[5:].strip()) for line in sse_out.splitlines() if line.startswith("data:") and '"value"' in line
    ]
    received_mqtt, lost_mqtt, per_s_mqtt = summary(mqtt_events)
    received_sse, lost_sse, per_s_sse = summary(sse_events)
    return {
        "rate": rate,
        "qos": qos,
        "seconds": duration,
        "mqtt_received": received_mqtt,
        "mqtt_per_s": per_s_mqtt,
        "mqtt_lost": lost_mqtt,
        "sse_received": received_sse,
        "sse_per_s": per_s_sse,
        "sse_lost": lost_sse,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default=".build/release/blegateway")
    parser.add_argument("--duration", type=float, default=5)
    parser.add_argument("--rates", default="500,1000,2000,4000")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        port = free_port()
        config = os.path.join(directory, "mosquitto.conf")
        with open(config, "w") as f:
            f.write(
                f"listener {port} 127.0.0.1\nallow_anonymous true\nlog_dest none\n"
                "max_queued_messages 1000000\n" + ("user root\n" if os.getuid() == 0 else "")
            )
        broker = subprocess.Popen(["mosquitto", "-c", config])
        time.sleep(0.5)
        try:
            print("| rate asked | QoS | MQTT values/s | MQTT received, lost | SSE values/s | SSE received, lost |")
            print("|---:|---:|---:|---:|---:|---:|")
            for rate in [int(r) for r in arguments.rates.split(",")]:
                for qos in (0, 1):
                    r = measure(arguments.binary, port, rate, qos, arguments.duration, directory)
                    print(
                        f"| {rate} | {qos} | {r['mqtt_per_s']} | {r['mqtt_received']}, {r['mqtt_lost']} | "
                        f"{r['sse_per_s']} | {r['sse_received']}, {r['sse_lost']} |",
                        flush=True,
                    )
        finally:
            broker.terminate()
            broker.wait()


if __name__ == "__main__":
    sys.exit(main())
