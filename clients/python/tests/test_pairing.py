"""Pairing with a passkey from a Bleak script, through the gateway's agent.

The gateway's agent has a keyboard and display; the smart plug shows the
passkey 123456, so BlueZ asks for it, and the `pairing` callback given to
`use()` answers.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from bleak import BleakClient
from bleak.exc import BleakDBusError, BleakError

from blegateway import Gateway, PairingRequest
from rig import Rig

PLUG = "D0:73:D5:22:41:9C"
SCHEDULE = "0000ff03-0000-1000-8000-00805f9b34fb"


async def unpaired(rig: Rig) -> None:
    async with Gateway(rig.url) as gateway:
        if any(d.address == PLUG and d.paired for d in await gateway.devices()):
            await gateway.unpair(PLUG)


async def test_pair_with_the_passkey_the_device_shows(rig: Rig, through_gateway: Callable[..., None]) -> None:
    await unpaired(rig)
    asked: list[PairingRequest] = []

    def passkey(request: PairingRequest) -> int:
        asked.append(request)
        return 123456

    through_gateway(rig.url, pairing=passkey)
    async with BleakClient(PLUG, timeout=20) as client:
        await client.pair()
        assert [(r.kind, r.address) for r in asked] == [("passkey", PLUG)]
        await client.write_gatt_char(SCHEDULE, b"\x08\x1e", response=True)
        assert await client.read_gatt_char(SCHEDULE) == b"\x08\x1e"
        await client.pair()  # paired already: nothing asked
        assert len(asked) == 1
        await client.unpair()
    assert not client.is_connected


async def test_connect_with_pair_true_and_an_async_callback(rig: Rig, through_gateway: Callable[..., None]) -> None:
    await unpaired(rig)

    async def passkey(request: PairingRequest) -> int:
        return 123456

    through_gateway(rig.url, pairing=passkey)
    client = BleakClient(PLUG, pair=True, timeout=20)
    await client.connect()
    try:
        assert len(await client.read_gatt_char(SCHEDULE)) == 2
        async with Gateway(rig.url) as gateway:
            assert (await gateway.device(PLUG)).paired
    finally:
        await client.unpair()


@pytest.mark.parametrize("answer", [111111, None])
async def test_a_wrong_or_missing_answer_fails_at_once(
    rig: Rig, through_gateway: Callable[..., None], answer: int | None
) -> None:
    await unpaired(rig)
    through_gateway(rig.url, pairing=(lambda request: answer) if answer is not None else None)
    async with BleakClient(PLUG, timeout=20) as client:
        started = time.monotonic()
        with pytest.raises(BleakError) as failed:
            await client.pair()
        assert time.monotonic() - started < 15  # not the agent's 60 s timeout
        assert isinstance(failed.value, BleakDBusError), failed.value
        assert failed.value.dbus_error.startswith("org.bluez.Error.Authentication")
