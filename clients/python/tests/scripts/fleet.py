"""A plain Bleak script for the fleet test: scan for the strap, browse it,
read, write, an ATT error, descriptors, notifications, and the link
dropped by the strap. Through a fleet, the strap is heard only by a
gateway the script does not talk to."""

import asyncio
from typing import Any

from bleak import BleakClient, BleakScanner
from bleak.exc import BleakGATTProtocolError
from common import error, report, until
from simulator import drop_link, notify

STRAP = "C4:7C:8D:6A:4F:01"
RELAY = "0000ff01-0000-1000-8000-00805f9b34fb"
SETTING = "0000ff10-0000-1000-8000-00805f9b34fb"
VALUES = [bytes([0x00, 70 + i]) for i in range(10)]


async def main() -> None:
    results: dict[str, Any] = {}
    device = await BleakScanner.find_device_by_address(STRAP, timeout=30)
    assert device is not None, "the strap was not found"
    results["found"] = device.address
    disconnections: list[str] = []
    async with BleakClient(device, lambda c: disconnections.append("first"), timeout=20) as client:
        results["services"] = [
            [
                service.uuid,
                service.handle,
                [
                    [char.uuid, char.handle, sorted(char.properties), [[d.uuid, d.handle] for d in char.descriptors]]
                    for char in sorted(service.characteristics, key=lambda c: c.handle)
                ],
            ]
            for service in sorted(client.services, key=lambda s: s.handle)
        ]
        await client.write_gatt_char(RELAY, b"\x05\x06", response=True)
        results["echo"] = (await client.read_gatt_char(RELAY)).hex()
        await client.write_gatt_char(RELAY, b"\x07", response=False)
        results["echo_command"] = (await client.read_gatt_char(RELAY)).hex()
        await client.write_gatt_char("2a39", b"\x01", response=True)
        try:
            await client.write_gatt_char("2a39", b"\x02", response=True)
        except BleakGATTProtocolError as e:
            results["att_error"] = [error(e), int(e.code)]

        relay = client.services.get_characteristic(RELAY)
        assert relay is not None
        description = relay.get_descriptor("2901")
        setting = relay.get_descriptor(SETTING)
        assert description is not None and setting is not None
        results["user_description"] = (await client.read_gatt_descriptor(description)).decode()
        results["setting"] = (await client.read_gatt_descriptor(setting)).hex()
        await client.write_gatt_descriptor(setting, b"\x0a\x0b")
        results["setting_written"] = (await client.read_gatt_descriptor(setting)).hex()
        try:
            await client.write_gatt_descriptor(description, b"x")
        except Exception as e:
            results["read_only_descriptor"] = error(e)

        received: list[str] = []
        await client.start_notify("2a37", lambda char, data: received.append(data.hex()))
        for value in VALUES:
            await notify(STRAP, "2a37", value)
        results["all_notified"] = await until(lambda: len(received) >= len(VALUES))
        results["notifications"] = received
        await client.stop_notify("2a37")
        await notify(STRAP, "2a37", b"\x00\xff")
        await asyncio.sleep(0.5)
        results["after_stop"] = received[len(VALUES) :]
    results["disconnected_by_us"] = [list(disconnections), client.is_connected]
    try:
        await client.read_gatt_char(RELAY)
    except Exception as e:
        results["read_after_disconnect"] = error(e)

    async with BleakClient(STRAP, lambda c: disconnections.append("dropped"), timeout=20) as again:
        results["again"] = (await again.read_gatt_char(RELAY)).hex()
        await drop_link(STRAP)
        results["dropped"] = [await until(lambda: "dropped" in disconnections), again.is_connected]
    results["disconnections"] = disconnections
    report(results)


asyncio.run(main())
