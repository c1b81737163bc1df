#!/usr/bin/env python3
"""Notification to Bleak callback, through the gateway against Bleak native.

One private bus with Benchmarks' bench-responder (a fast stand-in for
bluetoothd: one connected device whose characteristic fff2 notifies values
stamped with their sequence number and CLOCK_MONOTONIC when handed to the
bus) and the gateway in front of it. The same Bleak client code subscribes
to fff2 twice, each path alone on the bus with the responder: first with
blegateway.bleak's backend (over HTTP + SSE, the gateway on the bus), then,
with the gateway stopped, with Bleak's own BlueZ backend (dbus-fast). Each
takes the path it takes by default on bluetoothd 5.66: the gateway
AcquireNotify (values on a socket bluetoothd hands out, which drops what
does not fit once about 278 values wait), Bleak StartNotify (values as
PropertiesChanged signals, which dbus-daemon queues);
--no-acquire-notify puts the gateway on the signal path too. It measures
in the callback:

- latency: from the responder's stamp to the callback, p50 and p99, at a
  steady rate (--latency-rate, default 200/s);
- each process's CPU time per value at --common-rate (default 4,000/s):
  this script (the receiving client), the gateway, dbus-daemon, the
  responder;
- the highest zero-loss rate: a ladder of rates, each for --duration
  seconds, bisected three times between the last rate kept up with and the
  first one not. A rate is kept up with when every value reaches the
  callback, the responder was not slowed, and the callback kept pace (it
  took the values at 95% or more of the rate they were sent at). A rung
  that fails is tried once more: on a shared machine one stall of the
  receiving process for a few hundred milliseconds loses values through the
  gateway (bluetoothd's socket holds about 278 values; the gateway drops a
  stream that falls further behind than its buffer), while dbus-daemon
  queues them for Bleak native.

Run from the repository root with the checkout's .venv (make test-deps):

    make release                                    # or pass --gateway-bin
    swift build --package-path Benchmarks -c release --product bench-responder
    .venv/bin/python scripts/bleak-notify-bench.py

It prints each step and a table, and writes nothing; `--json` ends with the
figures as one line of JSON on standard output (the steps go to standard
error), which is how `make bench`'s `bleak` phase runs it. Not part of make
test (it measures).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import struct
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "clients" / "python" / "tests"))

from bleak import BleakAdapter, BleakClient  # noqa: E402
from bleak.backends.bluezdbus.adapter import BleakAdapterBlueZDBus  # noqa: E402
from bleak.backends.bluezdbus.client import BleakClientBlueZDBus  # noqa: E402
from bleak.exc import BleakError  # noqa: E402

from blegateway.bleak import GatewayBleakClient  # noqa: E402
from rig import Rig  # noqa: E402

DEVICE = "B0:0B:00:00:00:01"
CHARACTERISTIC = "0000fff2-0000-1000-8000-00805f9b34fb"


@dataclass
class Run:
    rate: float
    achieved: float
    sent: int
    received: int
    latencies_ms: list[float]
    sending_s: float
    """From the emit command to the responder's last send."""
    receiving_s: float
    """From the emit command to the last value's callback."""

    cpu_us: dict[str, float]
    """CPU time per value sent, in µs, of each process on the path."""

    @property
    def lost(self) -> int:
        return self.sent - self.received

    @property
    def received_rate(self) -> float:
        return self.received / self.receiving_s if self.receiving_s > 0 else 0.0

    @property
    def kept_up(self) -> bool:
        """Every value reached the callback, the source was not slowed down
        (a receiver that holds D-Bus back makes the responder's sends wait),
        and the receiver kept pace: it took the values at 95% or more of the
        rate they were sent at, so at most 5% of the window was still queued
        (in dbus-daemon, the gateway or a socket) when the source stopped.
        Without that last condition a receiver that falls behind passes for
        as long as some buffer on the way holds its backlog; with it, both
        paths are judged by what they sustain."""
        return self.lost == 0 and self.achieved >= 0.95 * self.rate and self.received_rate >= 0.95 * self.achieved

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else float("nan")


class Responder:
    """bench-responder, driven through its standard input."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, binary: Path, address: str, *arguments: str) -> Responder:
        process = await asyncio.create_subprocess_exec(
            str(binary), "--bus", address, *arguments, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        responder = cls(process)
        await responder._line("ready")
        return responder

    async def emit(self, rate: float, count: int) -> tuple[int, float]:
        """Sends `count` values at `rate`/s; how many it sent, at what rate it managed."""
        assert self.process.stdin is not None
        self.process.stdin.write(f"emit {rate:.0f} {count}\n".encode())
        await self.process.stdin.drain()
        _, sent, nanoseconds = (await self._line("done")).split()
        return int(sent), int(sent) / max(int(nanoseconds), 1) * 1e9

    async def _line(self, prefix: str) -> str:
        assert self.process.stdout is not None
        while True:
            line = (await self.process.stdout.readline()).decode()
            if not line:
                raise RuntimeError("bench-responder exited")
            if line.startswith(prefix):
                return line

    async def stop(self) -> None:
        self.process.terminate()
        await self.process.wait()


PROCESSES: dict[str, int] = {"client": os.getpid()}
"""The processes whose CPU time each measurement reports, by pid (the
gateway's only while it is on the path being measured)."""

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

PROGRESS = sys.stdout
"""Where the steps are reported: standard error under --json, so that the
figures are the only line on standard output (make bench reads it, and
keeps standard error in its log)."""


def cpu_seconds() -> dict[str, float]:
    """User and system time of each process in PROCESSES (all its threads)."""
    seconds: dict[str, float] = {}
    for name, pid in PROCESSES.items():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds[name] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return seconds


async def measure(client: BleakClient, responder: Responder, rate: float, duration: float) -> Run:
    latencies: list[float] = []
    seen: set[int] = set()
    last_arrival = 0

    def on_value(_: Any, data: bytearray) -> None:
        nonlocal last_arrival
        now = time.monotonic_ns()
        seq, stamp = struct.unpack_from("<IQ", data)
        if seq not in seen:
            seen.add(seq)
            latencies.append((now - stamp) / 1e6)
            last_arrival = now

    await client.start_notify(CHARACTERISTIC, on_value)
    try:
        cpu_before = cpu_seconds()
        started = time.monotonic_ns()
        sent, achieved = await responder.emit(rate, max(1, round(rate * duration)))
        sending_s = sent / achieved if achieved > 0 else 0.0
        # Let what is on its way arrive: until all are in, or nothing more comes for 2 s.
        last, quiet_since = -1, time.monotonic()
        while len(seen) < sent and time.monotonic() - quiet_since < 2.0:
            if len(seen) != last:
                last, quiet_since = len(seen), time.monotonic()
            await asyncio.sleep(0.05)
        cpu_after = cpu_seconds()
    finally:
        await client.stop_notify(CHARACTERISTIC)
    cpu_us = {
        name: (cpu_after[name] - cpu_before[name]) / max(sent, 1) * 1e6 for name in cpu_after if name in cpu_before
    }
    return Run(rate, achieved, sent, len(seen), latencies, sending_s, max(0, last_arrival - started) / 1e9, cpu_us)


async def step(client: BleakClient, responder: Responder, rate: float, duration: float) -> bool:
    """Whether `rate` is kept up with, in one try of two."""
    for attempt in ("", " (again)"):
        run = await measure(client, responder, rate, duration)
        verdict = "ok" if run.kept_up else "NOT KEPT UP"
        print(
            f"    {rate:8.0f}/s{attempt}: sent at {run.achieved:.0f}/s, received at {run.received_rate:.0f}/s, "
            f"lost {run.lost} of {run.sent}, p99 {run.percentile(99):.1f} ms: {verdict}; CPU µs a value: "
            + ", ".join(f"{name} {us:.1f}" for name, us in run.cpu_us.items()),
            file=PROGRESS,
            flush=True,
        )
        if run.kept_up:
            return True
        await asyncio.sleep(3)  # let a backlog drain before the next step
    return False


async def zero_loss_rate(client: BleakClient, responder: Responder, rates: list[float], duration: float) -> float:
    """The highest rate kept up with: the ladder, then three bisections."""
    best, failed = 0.0, None
    for rate in rates:
        if not await step(client, responder, rate, duration):
            failed = rate
            break
        best = rate
    if failed is not None:
        for _ in range(3):
            middle = (best + failed) / 2
            best, failed = (middle, failed) if await step(client, responder, middle, duration) else (best, middle)
    return best


async def subject(name: str, client: BleakClient, responder: Responder, options: argparse.Namespace) -> dict[str, Any]:
    print(f"{name}:", file=PROGRESS, flush=True)
    await client.connect()
    try:
        await measure(client, responder, options.latency_rate, 1.0)  # warm up
        run = await measure(client, responder, options.latency_rate, options.duration)
        print(
            f"    latency at {options.latency_rate:.0f}/s: p50 {run.percentile(50):.3f} ms, "
            f"p99 {run.percentile(99):.3f} ms ({run.received} of {run.sent})",
            file=PROGRESS,
            flush=True,
        )
        common = await measure(client, responder, options.common_rate, options.duration)
        print(
            f"    CPU µs a value at {options.common_rate:.0f}/s: "
            + ", ".join(f"{process} {us:.1f}" for process, us in common.cpu_us.items())
            + ("" if common.kept_up else " (NOT KEPT UP)"),
            file=PROGRESS,
            flush=True,
        )
        rates = [float(r) for r in options.rates.split(",")]
        best = await zero_loss_rate(client, responder, rates, options.duration)
    finally:
        # The responder's device never disconnects (it has no link to end):
        # close the client's side and move on.
        try:
            await asyncio.wait_for(client.disconnect(), 3)
        except (TimeoutError, BleakError):
            pass
    return {
        "p50_ms": run.percentile(50),
        "p99_ms": run.percentile(99),
        "mean_ms": statistics.fmean(run.latencies_ms),
        "zero_loss_rate": best,
        "cpu_us_at_common_rate": {process: round(us, 2) for process, us in common.cpu_us.items()},
        "common_rate_kept_up": common.kept_up,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gateway-bin", type=Path, default=ROOT / ".build" / "release" / "blegateway")
    parser.add_argument(
        "--responder-bin", type=Path, default=ROOT / "Benchmarks" / ".build" / "release" / "bench-responder"
    )
    parser.add_argument("--latency-rate", type=float, default=200)
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--rates", default="1000,2000,4000,8000,16000,32000,64000,128000")
    parser.add_argument(
        "--common-rate", type=float, default=4000, help="the rate at which each process's CPU per value is reported"
    )
    parser.add_argument(
        "--no-acquire-notify",
        action="store_true",
        help="the responder refuses AcquireNotify (as bluetoothd does for indications), so the gateway takes the"
        " signal path too",
    )
    parser.add_argument("--json", action="store_true", help="end with the figures as one line of JSON")
    options = parser.parse_args()
    global PROGRESS
    if options.json:
        PROGRESS = sys.stderr

    with tempfile.TemporaryDirectory() as work:
        bins = Path(work) / "bin"
        bins.mkdir()
        (bins / "blegateway").symlink_to(options.gateway_bin.resolve())
        os.environ["BLEGATEWAY_BIN_DIR"] = str(bins)
        rig = Rig(Path(work), gateway_args=("--max-connections-per-client", "0"))
        rig.start_bus()
        responder = await Responder.start(
            options.responder_bin, rig.address, *(("--no-acquire-notify",) if options.no_acquire_notify else ())
        )
        PROCESSES["responder"] = responder.process.pid
        PROCESSES["dbus-daemon"] = rig.bus_pid
        try:
            # Each path alone on the bus with the responder: the gateway
            # first (Bleak's BlueZ backend, once connected, keeps its match
            # rules for the life of the process), then Bleak native once
            # the gateway has stopped, as neither would otherwise be spared
            # the other's copy of every signal.
            rig.start_gateway()
            PROCESSES["gateway"] = rig.gateway_pid
            through = await subject(
                "Bleak through blegateway",
                BleakClient(DEVICE, backend=GatewayBleakClient, gateway=rig.url),
                responder,
                options,
            )
            rig.stop_gateway()
            del PROCESSES["gateway"]
            os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = rig.address
            # Bleak's BlueZ backend finds a connected device without a scan this way (as Benchmarks/peer does).
            adapter = await BleakAdapter.get(backend=BleakAdapterBlueZDBus)
            device = next(d for d in await adapter.get_connected_devices(["fff0"]) if d.address == DEVICE)
            native = await subject(
                "Bleak native (BlueZ backend)", BleakClient(device, backend=BleakClientBlueZDBus), responder, options
            )
        finally:
            rig.stop()
            await responder.stop()
    print(file=PROGRESS)
    print("| Bleak callback | native | through the gateway | added / ratio |", file=PROGRESS)
    print("|---|---|---|---|", file=PROGRESS)
    for key, label in (("p50_ms", "latency p50 (ms)"), ("p99_ms", "latency p99 (ms)")):
        added = through[key] - native[key]
        print(f"| {label} | {native[key]:.3f} | {through[key]:.3f} | {added:+.3f} ms |", file=PROGRESS)
    ratio = through["zero_loss_rate"] / native["zero_loss_rate"] if native["zero_loss_rate"] else float("nan")
    print(
        f"| zero-loss rate (/s) | {native['zero_loss_rate']:.0f} | {through['zero_loss_rate']:.0f} | {ratio:.2f}x |",
        file=PROGRESS,
    )
    if options.json:
        result = {
            "native": native,
            "gateway": through,
            "added_p50_ms": through["p50_ms"] - native["p50_ms"],
            "added_p99_ms": through["p99_ms"] - native["p99_ms"],
            "zero_loss_ratio": ratio,
            "latency_rate": options.latency_rate,
            "common_rate": options.common_rate,
            "duration_s": options.duration,
        }
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
