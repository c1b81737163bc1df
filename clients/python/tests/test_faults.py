"""Faults: an unreachable gateway, a wrong API key, a gateway that restarts
mid-stream, a device that goes away. Each ends in a clear exception or a
callback, never a hang."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from bleak import BleakClient, BleakScanner
from bleak.args.bluez import OrPattern
from bleak.assigned_numbers import AdvertisementDataType
from bleak.exc import BleakDeviceNotFoundError, BleakError

from blegateway import Gateway, GatewayProblem, GatewayUnreachable
from blegateway.bleak import BleakGatewayError
from rig import Rig, free_port

HEART_RATE = "C4:7C:8D:6A:3E:01"
PLUG = "D0:73:D5:22:41:9C"
RELAY = "0000ff01-0000-1000-8000-00805f9b34fb"
DEADLINE = 60.0
"""Generous: the machine may be loaded; a hang still fails."""


async def until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, "not within the deadline"
        await asyncio.sleep(0.02)


async def test_an_unreachable_gateway(through_gateway: Callable[..., None]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(GatewayUnreachable, match="unreachable"):
        async with Gateway(url) as gateway:
            await gateway.info()
    through_gateway(url)
    with pytest.raises(BleakGatewayError, match=f"blegateway at {url} is unreachable"):
        await BleakScanner.discover(timeout=0.5)
    with pytest.raises(BleakGatewayError, match="unreachable"):
        async with BleakClient(HEART_RATE):
            pass


async def test_a_wrong_api_key(tmp_path: Path, through_gateway: Callable[..., None]) -> None:
    rig = Rig(tmp_path, gateway_args=("--api-key", "right-key"))
    try:
        rig.start()
        async with Gateway(rig.url, "wrong-key") as gateway:
            with pytest.raises(GatewayProblem) as refused:
                await gateway.adapters()
            assert refused.value.status == 401
        async with Gateway(rig.url, "right-key") as gateway:
            assert [a.name for a in await gateway.adapters()] == ["hci0"]
        through_gateway(rig.url, "wrong-key")
        with pytest.raises(BleakGatewayError, match="401"):
            async with BleakClient(HEART_RATE):
                pass
    finally:
        rig.stop()


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM])
async def test_a_gateway_restart_mid_stream(
    own_rig: Rig, through_gateway: Callable[..., None], stop: signal.Signals
) -> None:
    """Notifications resume after the gateway comes back, or, if the link
    did not survive, the disconnected callback fires: never silence."""
    through_gateway(own_rig.url)
    disconnected = asyncio.Event()
    values: list[bytes] = []
    client = BleakClient(PLUG, lambda _: disconnected.set(), timeout=20)
    await client.connect()
    try:
        await client.start_notify(RELAY, lambda _, data: values.append(bytes(data)))
        await client.write_gatt_char(RELAY, b"\x01", response=True)
        await until(lambda: values == [b"\x01"])

        own_rig.stop_gateway(stop)
        own_rig.start_gateway()
        async with Gateway(own_rig.url) as gateway:
            linked = (await gateway.device(PLUG)).connected
            if linked:
                # Keep writing until the reopened stream hears one: the
                # subscription is made again within the retry pause.
                deadline = time.monotonic() + DEADLINE
                while b"\x00" not in values and not disconnected.is_set() and time.monotonic() < deadline:
                    await gateway.write(PLUG, RELAY, b"\x00")
                    await asyncio.sleep(0.2)
                assert b"\x00" in values and client.is_connected
            else:
                await asyncio.wait_for(disconnected.wait(), DEADLINE)
                assert not client.is_connected
        if stop == signal.SIGTERM:
            assert not linked  # a stopping gateway disconnects what it connected
    finally:
        await client.disconnect()


async def test_events_resume_across_a_restart(own_rig: Rig) -> None:
    async with Gateway(own_rig.url) as gateway:
        await gateway.connect(PLUG, timeout=20)
        seen: list[tuple[int, bytes]] = []
        async with gateway.events(types=["characteristic-value"], device=PLUG) as events:

            async def follow() -> None:
                async for event in events:  # and gateway-stopping, which every stream gets
                    if event.type == "characteristic-value":
                        assert event.id is not None and event.value is not None
                        seen.append((event.id, event.value))

            following = asyncio.create_task(follow())
            try:
                await gateway.write(PLUG, RELAY, b"\x01")
                await gateway.read(PLUG, RELAY)
                await until(lambda: len(seen) >= 1)
                # A clean stop commits every event first; after a kill -9
                # the events of its last milliseconds may be lost and their
                # ids given again (README, "Leave it running").
                own_rig.stop_gateway(signal.SIGTERM)
                own_rig.start_gateway()
                await gateway.connect(PLUG, timeout=20)
                await gateway.read(PLUG, RELAY)
                await until(lambda: len(seen) >= 2)
            finally:
                following.cancel()
        ids = [i for i, _ in seen]
        assert ids == sorted(set(ids))  # in order, none twice
        await gateway.disconnect(PLUG)


async def test_a_device_that_goes_away(own_rig: Rig, through_gateway: Callable[..., None]) -> None:
    through_gateway(own_rig.url)
    disconnected = asyncio.Event()
    client = BleakClient(HEART_RATE, lambda _: disconnected.set(), timeout=20)
    await client.connect()
    await own_rig.control("RemoveDevice", "s", HEART_RATE)
    await asyncio.wait_for(disconnected.wait(), DEADLINE)
    assert not client.is_connected
    with pytest.raises(BleakError):
        await client.read_gatt_char("2a38")
    await client.disconnect()
    with pytest.raises(BleakDeviceNotFoundError):
        await BleakClient(HEART_RATE, timeout=1).connect()


def test_passive_scanning_without_or_patterns_is_refused_clearly(through_gateway: Callable[..., None]) -> None:
    # As Bleak's BlueZ backend refuses it, before any request.
    through_gateway("http://127.0.0.1:1")
    with pytest.raises(BleakError, match="passive scanning mode requires bluez or_patterns"):
        BleakScanner(scanning_mode="passive")


async def test_passive_scanning_hears_what_the_or_patterns_match(
    experimental_rig: Rig, through_gateway: Callable[..., None]
) -> None:
    through_gateway(experimental_rig.url)
    heard: list[str] = []
    # The strap's manufacturer data: company 0x006b (little endian).
    pattern = OrPattern(0, AdvertisementDataType.MANUFACTURER_SPECIFIC_DATA, b"\x6b\x00")
    async with BleakScanner(
        lambda device, adv: heard.append(device.address), scanning_mode="passive", bluez={"or_patterns": [pattern]}
    ):
        await until(lambda: HEART_RATE in heard)
        await asyncio.sleep(1.0)
        async with Gateway(experimental_rig.url) as gateway:
            assert not (await gateway.adapter("hci0")).discovering, "a passive scan started a discovery"
    assert set(heard) == {HEART_RATE}


async def test_passive_scanning_without_a_monitor_says_why(own_rig: Rig, through_gateway: Callable[..., None]) -> None:
    through_gateway(own_rig.url)
    pattern = OrPattern(0, AdvertisementDataType.MANUFACTURER_SPECIFIC_DATA, b"\x6b\x00")
    scanner = BleakScanner(scanning_mode="passive", bluez={"or_patterns": [pattern]})
    with pytest.raises(BleakError, match="-E"):
        await scanner.start()


async def test_a_scan_goes_on_after_a_gateway_restart(own_rig: Rig, through_gateway: Callable[..., None]) -> None:
    through_gateway(own_rig.url)
    heard: list[str] = []
    async with BleakScanner(lambda device, adv: heard.append(device.address)):
        await until(lambda: PLUG in heard)
        own_rig.stop_gateway(signal.SIGKILL)
        own_rig.start_gateway()
        heard.clear()
        await until(lambda: PLUG in heard)
        async with Gateway(own_rig.url) as gateway:
            # Discovering again: the restarted gateway runs a scan for this scanner.
            deadline = time.monotonic() + DEADLINE
            while not (await gateway.adapter("hci0")).discovering:
                assert time.monotonic() < deadline, "the scan was not opened again"
                await asyncio.sleep(0.1)
    # stop() raised nothing: the scan was running again when it ended.
