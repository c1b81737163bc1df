#!/usr/bin/env python3
"""Notification to Bleak callback, through the gateway against Bleak native.

One private bus with Benchmarks' bench-responder (a fast stand-in for
bluetoothd: one connected device whose characteristic fff2 notifies values
stamped with their sequence number and CLOCK_MONOTONIC when handed to the
bus) and the gateway in front of it. The same Bleak client code subscribes
to fff2 twice: with Bleak's own BlueZ backend (dbus-fast, on the bus) and
with blegateway.bleak's backend (over HTTP + SSE), and measures in the
callback:

- latency: from the responder's stamp to the callback, p50 and p99, at a
  steady rate (--latency-rate, default 200/s);
- the highest zero-loss rate: a ladder of rates, each for --duration
  seconds, bisected between the last rate without loss and the first with.

Run from the repository root with the checkout's .venv (make test-deps):

    swift build -c release --product blegateway     # or pass --gateway-bin
    swift build --package-path Benchmarks -c release --product bench-responder
    .venv/bin/python scripts/bleak-notify-bench.py

It prints a table and writes nothing. Not part of make test (it measures).
"""

from __future__ import annotations

import argparse
import asyncio
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

    @property
    def lost(self) -> int:
        return self.sent - self.received

    @property
    def kept_up(self) -> bool:
        """Nothing lost, and the source was not slowed down (a receiver that
        holds D-Bus back makes the responder's sends wait)."""
        return self.lost == 0 and self.achieved >= 0.95 * self.rate

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else float("nan")


class Responder:
    """bench-responder, driven through its standard input."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, binary: Path, address: str) -> Responder:
        process = await asyncio.create_subprocess_exec(
            str(binary), "--bus", address, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
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


async def measure(client: BleakClient, responder: Responder, rate: float, duration: float) -> Run:
    latencies: list[float] = []
    seen: set[int] = set()

    def on_value(_: Any, data: bytearray) -> None:
        now = time.monotonic_ns()
        seq, stamp = struct.unpack_from("<IQ", data)
        if seq not in seen:
            seen.add(seq)
            latencies.append((now - stamp) / 1e6)

    await client.start_notify(CHARACTERISTIC, on_value)
    try:
        sent, achieved = await responder.emit(rate, max(1, round(rate * duration)))
        # Let what is on its way arrive: until all are in, or nothing more comes for 2 s.
        last, quiet_since = -1, time.monotonic()
        while len(seen) < sent and time.monotonic() - quiet_since < 2.0:
            if len(seen) != last:
                last, quiet_since = len(seen), time.monotonic()
            await asyncio.sleep(0.05)
    finally:
        await client.stop_notify(CHARACTERISTIC)
    return Run(rate, achieved, sent, len(seen), latencies)


async def step(client: BleakClient, responder: Responder, rate: float, duration: float) -> bool:
    run = await measure(client, responder, rate, duration)
    verdict = "ok" if run.kept_up else "NOT KEPT UP"
    print(f"    {rate:8.0f}/s: sent at {run.achieved:.0f}/s, lost {run.lost} of {run.sent}: {verdict}", flush=True)
    if not run.kept_up:
        await asyncio.sleep(3)  # let a backlog drain before the next step
    return run.kept_up


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


async def subject(
    name: str, client: BleakClient, responder: Responder, options: argparse.Namespace
) -> dict[str, float]:
    print(f"{name}:", flush=True)
    await client.connect()
    try:
        await measure(client, responder, options.latency_rate, 1.0)  # warm up
        run = await measure(client, responder, options.latency_rate, options.duration)
        print(
            f"    latency at {options.latency_rate:.0f}/s: p50 {run.percentile(50):.3f} ms, "
            f"p99 {run.percentile(99):.3f} ms ({run.received} of {run.sent})",
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
        "p50": run.percentile(50),
        "p99": run.percentile(99),
        "mean": statistics.fmean(run.latencies_ms),
        "zero_loss": best,
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
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as work:
        bins = Path(work) / "bin"
        bins.mkdir()
        (bins / "blegateway").symlink_to(options.gateway_bin.resolve())
        os.environ["BLEGATEWAY_BIN_DIR"] = str(bins)
        rig = Rig(Path(work), gateway_args=("--max-connections-per-client", "0"))
        rig.start_bus()
        responder = await Responder.start(options.responder_bin, rig.address)
        try:
            rig.start_gateway()
            os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = rig.address
            # Bleak's BlueZ backend finds a connected device without a scan this way (as Benchmarks/peer does).
            adapter = await BleakAdapter.get(backend=BleakAdapterBlueZDBus)
            device = next(d for d in await adapter.get_connected_devices(["fff0"]) if d.address == DEVICE)
            native = await subject(
                "Bleak native (BlueZ backend)", BleakClient(device, backend=BleakClientBlueZDBus), responder, options
            )
            through = await subject(
                "Bleak through blegateway",
                BleakClient(DEVICE, backend=GatewayBleakClient, gateway=rig.url),
                responder,
                options,
            )
        finally:
            rig.stop()
            await responder.stop()
    print()
    print("| Bleak callback | native | through the gateway | added / ratio |")
    print("|---|---|---|---|")
    for key, label in (("p50", "latency p50 (ms)"), ("p99", "latency p99 (ms)")):
        added = through[key] - native[key]
        print(f"| {label} | {native[key]:.3f} | {through[key]:.3f} | {added:+.3f} ms |")
    ratio = through["zero_loss"] / native["zero_loss"] if native["zero_loss"] else float("nan")
    print(f"| zero-loss rate (/s) | {native['zero_loss']:.0f} | {through['zero_loss']:.0f} | {ratio:.2f}x |")


if __name__ == "__main__":
    asyncio.run(main())
