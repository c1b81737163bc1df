"""Bleak through a fleet: two gateways on one real mosquitto, each over its
own simulated bluetoothd; the strap is heard only by g-b. A plain Bleak
script run through g-a with `--fleet` gives what it gives through g-b
directly, field by field; the asyncio client's `Fleet` browses it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from blegateway import Fleet, Gateway, GatewayProblem
from broker import Broker
from rig import HERE, Rig, wait_for
from test_differential import differences

SCRIPTS = HERE / "scripts"
STRAP = "C4:7C:8D:6A:4F:01"
RELAY = "0000ff01-0000-1000-8000-00805f9b34fb"


class HeldScan:
    """A scan held open on a gateway, so that it publishes what it hears
    (presence and advertisements) on the broker while the test runs."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._stop = threading.Event()
        self._response: httpx.Response | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> HeldScan:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with httpx.stream("GET", f"{self._url}/v1/scan", timeout=httpx.Timeout(10.0, read=60.0)) as response:
                    self._response = response
                    for _ in response.iter_lines():
                        if self._stop.is_set():
                            return
            except httpx.HTTPError:
                self._stop.wait(0.5)

    def stop(self) -> None:
        self._stop.set()
        if self._response is not None:
            self._response.close()
        self._thread.join(timeout=10)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Rig, Rig]]:
    broker = Broker(tmp_path_factory.mktemp("broker")).start()
    rigs: list[Rig] = []
    scans: list[HeldScan] = []
    try:
        for name, scenario in (("g-a", "fleet_a.yaml"), ("g-b", "fleet_b.yaml")):
            rig = Rig(
                tmp_path_factory.mktemp(name),
                gateway_args=("--mqtt", broker.url, "--gateway-id", name, "--mqtt-commands"),
                scenario=HERE / scenario,
            )
            rigs.append(rig)
            rig.start()
        a, b = rigs
        scans = [HeldScan(a.url).start(), HeldScan(b.url).start()]

        def heard() -> bool:
            found = httpx.get(f"{a.url}/v1/fleet/devices/{STRAP}", timeout=5)
            return found.status_code == 200 and bool(found.json()["heard_by"])

        wait_for(heard, "g-a's fleet view hearing the strap through g-b")
        yield a, b
    finally:
        for scan in scans:
            scan.stop()
        for rig in rigs:
            rig.stop()
        broker.stop()


def run(script: str, gateway: str, sim: Rig, *options: str) -> Any:
    """Runs a Bleak script unchanged through `gateway`, with the simulator
    of `sim` (the one that hears the strap) for what the script asks of the
    world."""
    environment = sim.environment()
    del environment["DBUS_SYSTEM_BUS_ADDRESS"]
    command = [sys.executable, "-m", "blegateway.bleak", "--gateway", gateway, *options, script]
    done = subprocess.run(command, cwd=SCRIPTS, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stderr}"
    return json.loads(done.stdout)


def test_a_bleak_script_through_the_fleet_does_what_it_does_on_the_gateway_that_hears_the_device(
    fleet: tuple[Rig, Rig],
) -> None:
    a, b = fleet
    assert httpx.get(f"{a.url}/v1/devices/{STRAP}", timeout=5).status_code == 404  # g-a never hears it
    direct = run("fleet.py", b.url, b)
    through = run("fleet.py", a.url, b, "--fleet")
    assert differences(direct, through) == []
    # The script saw real things, not two equal failures.
    assert through["found"] == STRAP
    assert through["echo"] == "0506" and through["echo_command"] == "07"
    assert through["att_error"][1] == 0x80
    assert through["user_description"] == "Relay"
    assert through["setting"] == "0102"
    assert through["all_notified"] and len(through["notifications"]) == 10
    assert through["after_stop"] == []
    assert through["dropped"] == [True, False]
    assert through["disconnections"] == ["first", "dropped"]
    # Without --fleet, g-a cannot reach the strap.
    environment = b.environment()
    del environment["DBUS_SYSTEM_BUS_ADDRESS"]
    alone = subprocess.run(
        [sys.executable, "-m", "blegateway.bleak", "--gateway", a.url, "fleet.py"],
        cwd=SCRIPTS,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert alone.returncode != 0 and "the strap was not found" in alone.stderr


def test_the_fleet_client_answers_as_the_gateway_that_has_the_device(fleet: tuple[Rig, Rig]) -> None:
    a, b = fleet

    async def main() -> None:
        async with Fleet(a.url) as through, Gateway(b.url) as holder:
            view = await through.fleet_device(STRAP)
            assert [h.gateway for h in view.heard_by] == ["g-b"]
            with pytest.raises(GatewayProblem) as not_connected:
                await through.services(STRAP)
            assert not_connected.value.status == 409
            device = await through.connect(STRAP, timeout=20)
            assert device.connected and through.holder(STRAP) == "g-b"
            try:
                assert await through.services(STRAP) == await holder.services(STRAP)
                assert await through.characteristic(STRAP, RELAY) == await holder.characteristic(STRAP, RELAY)
                await through.write(STRAP, RELAY, b"\x42")
                assert await through.read(STRAP, RELAY) == b"\x42" == await holder.read(STRAP, RELAY)
                assert await through.read_descriptor(STRAP, RELAY, "2901") == b"Relay"
                with pytest.raises(GatewayProblem) as unknown:
                    await through.read_descriptor(STRAP, RELAY, "2904")
                assert unknown.value.status == 404
            finally:
                await through.disconnect(STRAP)

    asyncio.run(main())


def test_scanning_through_the_fleet_finds_what_every_gateway_hears(fleet: tuple[Rig, Rig]) -> None:
    a, _ = fleet
    script = SCRIPTS / "scan_fleet.py"
    environment = {k: v for k, v in a.environment().items() if k != "DBUS_SYSTEM_BUS_ADDRESS"}
    command = [sys.executable, "-m", "blegateway.bleak", "--gateway", a.url, "--fleet", str(script)]
    done = subprocess.run(command, cwd=SCRIPTS, env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    # The strap (heard by g-b only) and the sensor g-a hears itself.
    assert found["C4:7C:8D:6A:4F:01"]["rssi"] == -55
    assert "C4:7C:8D:6A:4F:0A" in found
