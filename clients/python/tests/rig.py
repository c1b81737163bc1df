"""A private D-Bus bus with bluez-sim on it and the real gateway in front.

The same parts as the gateway's Swift integration tests and
scripts/lib/rig.sh: a dbus-daemon from a temporary config (never the
machine's buses), bluez-sim with `--connected-signal always` (Bleak's own
BlueZ backend waits for that signal), and `blegateway serve --bus` on the
same bus, so Bleak's BlueZ backend (DBUS_SYSTEM_BUS_ADDRESS) and the gateway
see one simulated bluetoothd.

The programs come from SwiftPM's debug build (`BLEGATEWAY_BIN_DIR`
overrides where they are looked for).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "scripts"))
import simulator  # noqa: E402  (the scripts' own way to reach bluez-sim)

REPOSITORY = HERE.parents[2]
SCENARIO = HERE / "scenario.yaml"

STARTUP_SECONDS = 60.0
"""How long a program may take to start on a loaded machine."""


def bin_dir() -> Path:
    configured = os.environ.get("BLEGATEWAY_BIN_DIR")
    return Path(configured) if configured else REPOSITORY / ".build" / "debug"


def wait_for(condition: Callable[[], bool], what: str, seconds: float = STARTUP_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {seconds:.0f} s")
        time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Rig:
    def __init__(
        self,
        work: Path,
        *,
        gateway_args: tuple[str, ...] = (),
        simulator_args: tuple[str, ...] = (),
        scenario: Path = SCENARIO,
    ) -> None:
        self.work = work
        self.scenario = scenario
        self.gateway_args = gateway_args
        self.simulator_args = simulator_args
        self.address = ""
        self.port = free_port()
        self._bus: subprocess.Popen[bytes] | None = None
        self._sim: subprocess.Popen[bytes] | None = None
        self._gateway: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Rig:
        self.start_bus()
        self.start_simulator()
        self.start_gateway()
        return self

    def start_bus(self) -> None:
        config = self.work / "bus.conf"
        config.write_text(
            f"""<busconfig>
  <type>session</type>
  <listen>unix:path={self.work}/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/><allow own="*"/><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
  </policy>
</busconfig>
"""
        )
        address_file = self.work / "bus.address"
        with address_file.open("wb") as out, (self.work / "bus.log").open("wb") as log:
            self._bus = subprocess.Popen(
                ["dbus-daemon", "--nofork", f"--config-file={config}", "--print-address=1"], stdout=out, stderr=log
            )
        wait_for(lambda: address_file.read_text().strip() != "", "dbus-daemon printing its address")
        self.address = address_file.read_text().splitlines()[0]

    def start_simulator(self) -> None:
        log_path = self.work / "sim.log"
        with log_path.open("wb") as log:
            self._sim = subprocess.Popen(
                [
                    str(bin_dir() / "bluez-sim"),
                    "--bus",
                    self.address,
                    "--scenario",
                    str(self.scenario),
                    "--connected-signal",
                    "always",
                    *self.simulator_args,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        wait_for(lambda: "serving org.bluez" in log_path.read_text(), "bluez-sim serving org.bluez")

    def start_gateway(self) -> None:
        log = (self.work / "gateway.log").open("ab")
        self._gateway = subprocess.Popen(
            [
                str(bin_dir() / "blegateway"),
                "serve",
                "--bus",
                self.address,
                "--listen",
                f"127.0.0.1:{self.port}",
                "--state-dir",
                str(self.work / "state"),
                "--log-level",
                "warning",
                *self.gateway_args,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        wait_for(self._healthy, "the gateway answering /health with 200")

    @property
    def bus_pid(self) -> int:
        assert self._bus is not None
        return self._bus.pid

    @property
    def gateway_pid(self) -> int:
        assert self._gateway is not None
        return self._gateway.pid

    def stop_gateway(self, sig: signal.Signals = signal.SIGTERM) -> None:
        if self._gateway is not None:
            self._gateway.send_signal(sig)
            self._gateway.wait(timeout=STARTUP_SECONDS)
            self._gateway = None

    def _healthy(self) -> bool:
        assert self._gateway is not None
        if self._gateway.poll() is not None:
            raise RuntimeError(f"the gateway exited ({self._gateway.returncode}): {self.gateway_log()}")
        try:
            return httpx.get(f"{self.url}/health", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    def gateway_log(self) -> str:
        return (self.work / "gateway.log").read_text(errors="replace")[-4000:]

    def environment(self) -> dict[str, str]:
        """For a Bleak script on the simulated bluetoothd (its own backend)."""
        return {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": self.address, "SIM_BUS_ADDRESS": self.address}

    async def control(self, method: str, signature: str, *args: Any) -> Any:
        """Calls bluez-sim's control interface (org.blegateway.Simulator1)."""
        return await simulator.call(method, signature, *args, address=self.address)

    def stop(self) -> None:
        self.stop_gateway()
        for process in (self._sim, self._bus):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
