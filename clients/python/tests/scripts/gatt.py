"""Reads, writes, an ATT error, notifications, descriptors, MTU and disconnections."""

import asyncio
from typing import Any

from bleak import BleakAdapter, BleakClient
from bleak.exc import BleakGATTProtocolError
from common import HEART_RATE, PLUG, error, report, until
from simulator import drop_link, notify

VALUES = [bytes([0x00, 60 + i]) for i in range(20)]


async def main() -> None:
    results: dict[str, Any] = {}
    disconnections: list[str] = []
    async with BleakClient(HEART_RATE, lambda c: disconnections.append(c.address), timeout=20) as client:
        results["location"] = (await client.read_gatt_char("2a38")).hex()
        adapter = await BleakAdapter.get()
        connected = await adapter.get_connected_devices(["180d"])
        results["connected_devices"] = sorted([d.address, d.name] for d in connected)
        await client.write_gatt_char("2a39", b"\x01", response=True)
        try:
            await client.write_gatt_char("2a39", b"\x02", response=True)
        except BleakGATTProtocolError as e:
            results["att_error"] = [error(e), int(e.code)]
        try:
            await client.read_gatt_char("2a37")
        except Exception as e:
            results["read_notify_only"] = error(e)
        try:
            await client.start_notify("2a38", lambda c, d: None)
        except Exception as e:
            results["notify_read_only"] = error(e)

        received: list[str] = []
        await client.start_notify("2a37", lambda char, data: received.append(data.hex()))
        measurement = client.services.get_characteristic("2a37")
        assert measurement is not None
        cccd = measurement.get_descriptor("2902")
        assert cccd is not None
        results["cccd"] = [cccd.uuid, cccd.handle]
        for value in VALUES:
            await notify(HEART_RATE, "2a37", value)
        results["all_notified"] = await until(lambda: len(received) >= len(VALUES))
        results["notifications"] = received
        await client.stop_notify("2a37")
        await notify(HEART_RATE, "2a37", b"\x00\xff")
        await asyncio.sleep(0.3)
        results["after_stop"] = received[len(VALUES) :]

        backend: Any = client._backend
        if type(backend).__name__ == "BleakClientBlueZDBus":
            await backend._acquire_mtu()  # as Bleak's mtu_size example does
        results["mtu"] = client.mtu_size
        results["max_write_without_response"] = measurement.max_write_without_response_size
    results["disconnected_by_us"] = [list(disconnections), client.is_connected]
    try:
        await client.read_gatt_char("2a38")
    except Exception as e:
        results["read_after_disconnect"] = error(e)

    async with BleakClient(PLUG, lambda c: disconnections.append("plug"), timeout=20) as plug:
        await plug.write_gatt_char("0000ff01-0000-1000-8000-00805f9b34fb", b"\x01", response=False)
        results["echo"] = (await plug.read_gatt_char("0000ff01-0000-1000-8000-00805f9b34fb")).hex()
        relay = plug.services.get_characteristic("0000ff01-0000-1000-8000-00805f9b34fb")
        assert relay is not None
        description = relay.get_descriptor("2901")
        assert description is not None
        results["user_description"] = (await plug.read_gatt_descriptor(description)).decode()
        try:
            await plug.read_gatt_char("0000ff03-0000-1000-8000-00805f9b34fb")
        except Exception as e:
            results["needs_pairing"] = error(e)
        await drop_link(PLUG)
        results["dropped"] = [await until(lambda: "plug" in disconnections), plug.is_connected]
    results["disconnections"] = disconnections
    report(results)


asyncio.run(main())
