#!/usr/bin/env python3
"""Figures for a fleet of gateways on one broker (docs/fleet.md).

Two measurements, each over real processes: one mosquitto, and per gateway
its own private dbus-daemon, its own `bluez-sim` (the release simulator,
with `--experimental` so `--mqtt-presence passive` runs an advertisement
monitor) and `blegateway serve --mqtt … --mqtt-commands --mqtt-presence
passive`.

roam: two gateways, `g-a` (hears the device at -50 dBm) and `g-b` (-60,
within the 16 dB margin, so neither hands it over while both hear it). The
device is kept by the fleet with a standing subscription to a
characteristic that notifies a counter 20 times a second. Then, ROAMS
times, the holder loses it (the simulator's `SetInRange false` on the
holder's simulator) and the script times, from that call, the holder's
`device-disconnected`, its `release`, the other's `take`, `hold`,
`device-connected`, `services-resolved` and its first value on
`<prefix>/<id>/devices/<address>/characteristics/<uuid>`, all read from
one `mosquitto_sub -F %U` on the broker (the same wall clock). The device
comes back into the old holder's range before the next roam, so each roam
goes the other way.

rest: GATEWAYS gateways and DEVICES simulated advertisers (1 s interval,
±6 dB RSSI jitter), each device heard by HEARD_BY neighbouring gateways
(its home gateway strongest); KEEPS of them kept by the fleet. After a
warm-up, for WINDOW seconds: the messages the broker delivers to a
subscriber on `#` (per second, by kind of topic), and the CPU of each
gateway, each simulator and mosquitto (/proc/<pid>/stat).

    scripts/fleet-bench.py roam [--roams 6] [--json]
    scripts/fleet-bench.py rest [--gateways 10] [--devices 1000] [--heard-by 1]
                                [--keeps 10] [--warmup 60] [--window 60] [--json]

Binaries: .build/release/blegateway and .build/release/bluez-sim (or
--gateway / --simulator). Not a test: the figures depend on the machine
and its load, which each result carries (os.getloadavg).
"""

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

from rate_rig import free_port, wait_for_listener

PREFIX = "blegateway"
ROAMER = "C4:7C:8D:6A:42:01"
COUNTER = "0000ff01-0000-1000-8000-00805f9b34fb"
BUS_CONFIG = """<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/><allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
  </policy>
</busconfig>
"""
TICKS = os.sysconf("SC_CLK_TCK")


def request(port: int, method: str, path: str, body: str | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        # The command name may hold spaces: the fields after it start past ')'.
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


@dataclass
class Gateway:
    id: str
    bus: str
    port: int
    process: subprocess.Popen[bytes]
    simulator: subprocess.Popen[bytes]

    def control(self, method: str, signature: str, *arguments: str) -> None:
        """Calls the simulator's control interface (docs/simulator.md)."""
        subprocess.run(
            [
                "busctl",
                f"--address={self.bus}",
                "call",
                "org.blegateway.Simulator",
                "/org/blegateway/simulator",
                "org.blegateway.Simulator1",
                method,
                signature,
                *arguments,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )


@dataclass
class Watcher:
    """A `mosquitto_sub` on the broker; its lines (receive time, topic,
    payload) in the broker's order."""

    process: subprocess.Popen[str]
    lines: list[tuple[float, str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            stamp, _, rest = line.rstrip("\n").partition(" ")
            topic, _, payload = rest.partition(" ")
            with self.lock:
                self.lines.append((float(stamp), topic, payload))

    def since(self, index: int) -> list[tuple[float, str, str]]:
        with self.lock:
            return self.lines[index:]

    def count(self) -> int:
        with self.lock:
            return len(self.lines)

    def wait(self, start: int, match: "re.Pattern[str]", deadline: float = 60) -> tuple[float, str, str]:
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            for line in self.since(start):
                if match.search(f"{line[1]} {line[2]}"):
                    return line
            time.sleep(0.02)
        raise SystemExit(f"never saw {match.pattern}")


class Rig:
    """Processes of one measurement, all stopped (and their directory
    removed) by `close`."""

    def __init__(self, gateway_binary: str, simulator_binary: str) -> None:
        self.gateway_binary = gateway_binary
        self.simulator_binary = simulator_binary
        self.directory = tempfile.mkdtemp(prefix="fleet-bench-")
        self.processes: list[subprocess.Popen[bytes] | subprocess.Popen[str]] = []
        self.broker_port = free_port()
        conf = os.path.join(self.directory, "mosquitto.conf")
        with open(conf, "w") as file:
            file.write(f"listener {self.broker_port} 127.0.0.1\nallow_anonymous true\nset_tcp_nodelay true\n")
            if os.getuid() == 0:
                file.write("user root\n")
        self.broker = subprocess.Popen(["mosquitto", "-c", conf], stderr=subprocess.DEVNULL)
        self.processes.append(self.broker)
        wait_for_listener(self.broker_port)

    def watch(self, topic: str, output: str = "%U %t %p") -> Watcher:
        process = subprocess.Popen(
            ["mosquitto_sub", "-p", str(self.broker_port), "-t", topic, "-F", output, "-V", "mqttv5"],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.processes.append(process)
        watcher = Watcher(process)
        watcher.start()
        return watcher

    def gateway(self, id: str, scenario: str, arguments: list[str]) -> Gateway:
        directory = os.path.join(self.directory, id)
        os.mkdir(directory)
        with open(os.path.join(directory, "bus.conf"), "w") as file:
            file.write(BUS_CONFIG.format(socket=os.path.join(directory, "bus")))
        bus = subprocess.Popen(
            ["dbus-daemon", "--nofork", f"--config-file={directory}/bus.conf", "--print-address=1"],
            stdout=subprocess.PIPE,
            stderr=open(os.path.join(directory, "bus.log"), "w"),
            text=True,
        )
        self.processes.append(bus)
        assert bus.stdout is not None
        address = bus.stdout.readline().strip()
        with open(os.path.join(directory, "scenario.yaml"), "w") as file:
            file.write(scenario)
        simulator = subprocess.Popen(
            [self.simulator_binary, "--bus", address, "--scenario", f"{directory}/scenario.yaml", "--experimental"],
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(directory, "sim.log"), "w"),
        )
        self.processes.append(simulator)
        port = free_port()
        process = subprocess.Popen(
            [
                self.gateway_binary,
                "serve",
                "--bus",
                address,
                "--listen",
                f"127.0.0.1:{port}",
                "--log-level",
                "warning",
                "--state-dir",
                f"{directory}/state",
                "--mqtt",
                f"mqtt://127.0.0.1:{self.broker_port}",
                "--gateway-id",
                id,
                "--mqtt-commands",
                "--mqtt-presence",
                "passive",
                *arguments,
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(directory, "gateway.log"), "w"),
        )
        self.processes.append(process)
        return Gateway(id, address, port, process, simulator)

    def close(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
        if os.environ.get("KEEP") != "1":
            shutil.rmtree(self.directory, ignore_errors=True)


# roam --------------------------------------------------------------------

ROAM_SCENARIO = """timing: 1
adapters:
  - id: hci0
    address: "00:1A:7D:DA:74:1{index}"
devices:
  - address: "{address}"
    name: Roaming counter
    rssi: {rssi}
    advertising: {{ interval: 0.1, uuids: ["ff00"] }}
    connection: {{ delay: 0.5, resolveDelay: 0.5 }}
    services:
      - uuid: "ff00"
        characteristics:
          - uuid: "{uuid}"
            flags: [read, notify]
            behaviour: {{ kind: counter, start: 0, step: 1, size: 4, rate: 20 }}
"""

STEPS = ["disconnected", "release", "take", "hold", "connected", "resolved", "value"]


def roam_steps(lines: list[tuple[float, str, str]], old: str, new: str, t0: float) -> dict[str, float]:
    """Milliseconds from `t0` to the first line of each step of a roam
    from `old` to `new`."""
    device = f"{PREFIX}/{{}}/devices/{ROAMER}"
    owner = f"{PREFIX}/any/owner/{ROAMER}"

    def action(gateway: str, name: str) -> "re.Pattern[str]":
        return re.compile(
            re.escape(owner)
            + r" \{.*\"gateway\":\""
            + gateway
            + r"\".*\"action\":\""
            + name
            + '"'
            + r"|"
            + re.escape(owner)
            + r" \{.*\"action\":\""
            + name
            + r"\".*\"gateway\":\""
            + gateway
            + '"'
        )

    patterns = {
        "disconnected": re.compile(re.escape(device.format(old) + "/connection") + r' \{"type":"device-disconnected"'),
        "release": action(old, "release"),
        "take": action(new, "take"),
        "hold": action(new, "hold"),
        "connected": re.compile(re.escape(device.format(new) + "/connection") + r' \{"type":"device-connected"'),
        "resolved": re.compile(re.escape(device.format(new) + "/connection") + r' \{"type":"services-resolved"'),
        "value": re.compile(re.escape(device.format(new) + "/characteristics/" + COUNTER) + " "),
    }
    found: dict[str, float] = {}
    for stamp, topic, payload in lines:
        for step, pattern in patterns.items():
            if step not in found and pattern.search(f"{topic} {payload}"):
                found[step] = round((stamp - t0) * 1000, 1)
    return found


def roam(args: argparse.Namespace) -> dict[str, object]:
    rig = Rig(args.gateway, args.simulator)
    try:
        watcher = rig.watch(f"{PREFIX}/#")
        gateways = {
            id: rig.gateway(
                id,
                ROAM_SCENARIO.format(index=index, address=ROAMER, rssi=rssi, uuid=COUNTER),
                ["--mqtt-keepalive", str(args.keepalive)],
            )
            for index, (id, rssi) in enumerate([("g-a", -50), ("g-b", -60)])
        }
        for gateway in gateways.values():
            wait_for_listener(gateway.port)
        for id in gateways:
            watcher.wait(0, re.compile(re.escape(f"{PREFIX}/{id}/devices/{ROAMER}/presence") + " {"))
        status, body = request(
            gateways["g-b"].port,
            "PUT",
            f"/v1/devices/{ROAMER}/keep",
            json.dumps({"fleet": True, "label": "bench", "subscriptions": [{"characteristic": COUNTER}]}),
        )
        if status != 202:
            raise SystemExit(f"keep: {status} {body[:300]!r}")
        holder, other = "g-a", "g-b"
        watcher.wait(0, re.compile(re.escape(f"{PREFIX}/{holder}/devices/{ROAMER}/characteristics/{COUNTER}") + " "))
        roams: list[dict[str, float]] = []
        directions: list[dict[str, str]] = []
        for _ in range(args.roams):
            time.sleep(args.settle)
            start = watcher.count()
            loads = load()
            t0 = time.time()
            gateways[holder].control("SetInRange", "sb", ROAMER, "false")
            watcher.wait(
                start,
                re.compile(re.escape(f"{PREFIX}/{other}/devices/{ROAMER}/characteristics/{COUNTER}") + " "),
                deadline=120,
            )
            steps = roam_steps(watcher.since(start), holder, other, t0)
            if args.trace:
                for stamp, topic, payload in watcher.since(start):
                    if "/characteristics/" not in topic:
                        print(f"{(stamp - t0) * 1000:9.1f} {topic} {payload[:160]}", file=sys.stderr)
            missing = [step for step in STEPS if step not in steps]
            if missing:
                raise SystemExit(f"roam {holder} -> {other}: no {missing} in {watcher.since(start)[-40:]}")
            roams.append(steps)
            directions.append({"from": holder, "to": other, "load": loads})
            if not args.json:
                print(f"{holder} -> {other} (load {loads}): " + ", ".join(f"{s} {steps[s]:.0f}" for s in STEPS) + " ms")
            # Back in the old holder's range: it hears it again, 10 dB
            # better than the new holder but within the margin, so the
            # device stays put until the next loss.
            gateways[holder].control("SetInRange", "sb", ROAMER, "true")
            holder, other = other, holder
        totals = [r["value"] for r in roams]
        result: dict[str, object] = {
            "roams": [{**direction, **steps} for direction, steps in zip(directions, roams, strict=True)],
            "value_p50_ms": round(statistics.median(totals), 1),
            "value_max_ms": round(max(totals), 1),
            "steps_p50_ms": {step: round(statistics.median(r[step] for r in roams), 1) for step in STEPS},
            "keepalive_s": args.keepalive,
        }
        return result
    finally:
        rig.close()


# rest --------------------------------------------------------------------


def rest_scenario(gateway: int, gateways: int, devices: int, heard_by: int) -> str:
    """The devices `gateway`'s adapter hears: its own share (at -45 to
    -69 dBm) and those of the `heard_by - 1` gateways before it, each 15 dB
    weaker per step away."""
    per_gateway = devices // gateways
    lines = ["timing: 1", "adapters:", "  - id: hci0", f'    address: "00:1A:7D:DA:75:{gateway:02X}"', "devices:"]
    for distance in range(heard_by):
        home = (gateway - distance) % gateways
        for slot in range(per_gateway):
            index = home * per_gateway + slot
            lines += [
                f'  - address: "C0:00:00:00:{index >> 8:02X}:{index & 0xFF:02X}"',
                f"    name: Sensor {index}",
                f"    rssi: {-45 - slot % 25 - 15 * distance}",
                "    rssiJitter: 6",
                '    advertising: { interval: 1.0, uuids: ["181a"], counter: true }',
                "    connection: { delay: 0.5, resolveDelay: 0.5 }",
                "    services:",
                '      - uuid: "180f"',
                "        characteristics:",
                '          - { uuid: "2a19", flags: [read, notify], value: "64" }',
            ]
    return "\n".join(lines) + "\n"


def kind(topic: str) -> str:
    parts = topic.split("/")
    if len(parts) >= 5 and parts[2] == "devices":
        return parts[4]  # presence, connection, keep, characteristics
    if len(parts) >= 3 and parts[1] == "any":
        return "any/" + parts[2]  # owner, keep, claims, cmd
    return parts[2] if len(parts) >= 3 else topic  # heartbeat, status, …


def rest(args: argparse.Namespace) -> dict[str, object]:
    rig = Rig(args.gateway, args.simulator)
    try:
        gateways = [
            rig.gateway(f"g{index:02}", rest_scenario(index, args.gateways, args.devices, args.heard_by), [])
            for index in range(args.gateways)
        ]
        for gateway in gateways:
            wait_for_listener(gateway.port, deadline=120)
        per_gateway = args.devices // args.gateways
        kept = [f"C0:00:00:00:{(g * per_gateway) >> 8:02X}:{(g * per_gateway) & 0xFF:02X}" for g in range(args.keeps)]
        time.sleep(15)  # a first presence from every gateway, so the holders are chosen by signal
        for index, address in enumerate(kept):
            status, body = request(
                gateways[index % len(gateways)].port,
                "PUT",
                f"/v1/devices/{address}/keep",
                json.dumps({"fleet": True, "subscriptions": [{"characteristic": "2a19"}]}),
            )
            if status != 202:
                raise SystemExit(f"keep {address}: {status} {body[:300]!r}")
        time.sleep(args.warmup)
        watcher = rig.watch("#", output="%U %t")
        time.sleep(5)  # the retained messages delivered on subscribing are not counted
        processes = {g.id: g.process.pid for g in gateways}
        simulators = {g.id: g.simulator.pid for g in gateways}
        before = {pid: cpu_ticks(pid) for pid in [*processes.values(), *simulators.values(), rig.broker.pid]}
        start = watcher.count()
        loads = load()
        started = time.monotonic()
        time.sleep(args.window)
        elapsed = time.monotonic() - started
        after = {pid: cpu_ticks(pid) for pid in before}
        lines = watcher.since(start)
        loads_after = load()

        def percent(pid: int) -> float:
            return round((after[pid] - before[pid]) / TICKS / elapsed * 100, 2)

        kinds: dict[str, int] = {}
        for _, topic, _ in lines:
            kinds[kind(topic)] = kinds.get(kind(topic), 0) + 1
        holders: dict[str, str] = {}
        for address in kept:
            _, body = request(gateways[0].port, "GET", f"/v1/fleet/devices/{address}")
            holders[address] = str(json.loads(body).get("owner"))
        gateway_cpu = {id: percent(pid) for id, pid in processes.items()}
        simulator_cpu = {id: percent(pid) for id, pid in simulators.items()}
        return {
            "gateways": args.gateways,
            "devices": args.devices,
            "heard_by": args.heard_by,
            "advertisers_simulated": args.devices * args.heard_by,
            "keeps": args.keeps,
            "held": sum(1 for owner in holders.values() if owner != "None"),
            "window_s": round(elapsed, 1),
            "load_before": loads,
            "load_after": loads_after,
            "broker_messages_per_s": round(len(lines) / elapsed, 1),
            "by_kind_per_s": {k: round(v / elapsed, 2) for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])},
            "gateway_cpu_percent": gateway_cpu,
            "gateway_cpu_percent_median": round(statistics.median(gateway_cpu.values()), 2),
            "simulator_cpu_percent_median": round(statistics.median(simulator_cpu.values()), 2),
            "mosquitto_cpu_percent": percent(rig.broker.pid),
        }
    finally:
        rig.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gateway", default=".build/release/blegateway")
    parser.add_argument("--simulator", default=".build/release/bluez-sim")
    parser.add_argument("--json", action="store_true")
    commands = parser.add_subparsers(dest="command", required=True)
    roam_parser = commands.add_parser("roam")
    roam_parser.add_argument("--roams", type=int, default=6)
    roam_parser.add_argument("--keepalive", type=int, default=30)
    roam_parser.add_argument("--trace", action="store_true", help="print the roams' messages (not values)")
    roam_parser.add_argument(
        "--settle", type=float, default=62, help="seconds between a roam and the next loss (past the 60 s penalty)"
    )
    rest_parser = commands.add_parser("rest")
    rest_parser.add_argument("--gateways", type=int, default=10)
    rest_parser.add_argument("--devices", type=int, default=1000)
    rest_parser.add_argument("--heard-by", type=int, default=1)
    rest_parser.add_argument("--keeps", type=int, default=10)
    rest_parser.add_argument("--warmup", type=float, default=60)
    rest_parser.add_argument("--window", type=float, default=60)
    args = parser.parse_args()
    result = roam(args) if args.command == "roam" else rest(args)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
