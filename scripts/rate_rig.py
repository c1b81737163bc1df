"""What the bench and rate scripts share: a simulator scenario with one
device whose characteristic notifies a little-endian counter at a given rate,
so a receiver can count what it lost (mqtt-notification-rate.py,
notify-path-compare.py); waiting for the gateway to listen, and connecting
it to that device; and a free TCP
port to give a gateway or broker, and waiting until it accepts (fleet-bench.py,
fleet-read-latency.py, mqtt-command-burst.py)."""

import re
import socket
import subprocess
import time

DEVICE = "C4:7C:8D:6A:3E:01"
UUID = "0000ff01-0000-1000-8000-00805f9b34fb"


def scenario(rate):
    return f"""
timing: 0.01
devices:
  - address: "{DEVICE}"
    name: Counter
    advertising: {{ interval: 0.05 }}
    connection: {{ delay: 1, resolveDelay: 1 }}
    services:
      - uuid: "ff00"
        characteristics:
          - uuid: "{UUID}"
            flags: [read, notify]
            behaviour: {{ kind: counter, start: 0, step: 1, size: 4, rate: {rate} }}
"""


def wait_for_port(process, log_path, deadline=60):
    """The port the gateway logged it listens on (started with port 0)."""
    end = time.time() + deadline
    while time.time() < end:
        with open(log_path) as log:
            match = re.search(r"listening on http://127\.0\.0\.1:(\d+)\n", log.read())
        if match:
            return int(match.group(1))
        if process.poll() is not None:
            break
        time.sleep(0.05)
    raise SystemExit(f"the gateway did not start: {open(log_path).read()}")


def connect_device(http: str) -> None:
    """Has the gateway at `http` hear DEVICE (a one-second scan) and connect it."""
    scan = ["-X", "POST", f"{http}/v1/scan", "-H", "Content-Type: application/json", "--data", '{"duration_ms":1000}']
    for arguments in (scan, ["-X", "POST", f"{http}/v1/devices/{DEVICE}/connect"]):
        subprocess.run(["curl", "-sf", *arguments], check=True, capture_output=True)


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on (as of now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for_listener(port: int, deadline: float = 60) -> None:
    """Returns once something accepts connections on 127.0.0.1:port."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")
