"""A plain Bleak scan of 5 seconds: every device found, with its RSSI."""

import asyncio
from typing import Any

from bleak import BleakScanner
from common import report


async def main() -> None:
    found = await BleakScanner.discover(timeout=5, return_adv=True)
    results: dict[str, Any] = {address: {"rssi": adv.rssi} for address, (_, adv) in found.items()}
    report(results)


asyncio.run(main())
