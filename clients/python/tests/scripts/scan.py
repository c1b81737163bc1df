"""Scan as a user would: by service, everything, by name and by address, with a callback."""

import asyncio

from bleak import BleakScanner
from common import PLUG, advertisement, report, until

HEART_RATE_SERVICE = "0000180d-0000-1000-8000-00805f9b34fb"


async def main() -> None:
    by_service = await BleakScanner.discover(timeout=1.5, return_adv=True, service_uuids=[HEART_RATE_SERVICE])
    everything = await BleakScanner.discover(timeout=1.5, return_adv=True)
    plug = await BleakScanner.find_device_by_name("Smart Plug 419C", timeout=10)
    beacon = await BleakScanner.find_device_by_address("f1:e2:d3:c4:b5:a6", timeout=10)
    missing = await BleakScanner.find_device_by_address("12:34:56:78:9A:BC", timeout=1)
    heard: list[str] = []
    async with BleakScanner(lambda device, adv: heard.append(device.address), [HEART_RATE_SERVICE]):
        await until(lambda: len(heard) > 0)
    report(
        {
            "by_service": sorted((advertisement(d, a) for d, a in by_service.values()), key=lambda x: x["address"]),
            "everything": sorted((advertisement(d, a) for d, a in everything.values()), key=lambda x: x["address"]),
            "by_name": plug and [plug.address, plug.name, plug.address == PLUG],
            "by_address": beacon and [beacon.address, beacon.name],
            "missing": missing,
            "callback": sorted(set(heard)),
        }
    )


asyncio.run(main())
