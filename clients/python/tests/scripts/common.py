"""How the scripts write down what Bleak gave them, to compare two runs."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from bleak.backends.device import BLEDevice
from bleak.backends.scanner import AdvertisementData

HEART_RATE = "C4:7C:8D:6A:3E:01"
PLUG = "D0:73:D5:22:41:9C"


def advertisement(device: BLEDevice, adv: AdvertisementData) -> dict[str, Any]:
    return {
        "address": device.address,
        "name": device.name,
        "local_name": adv.local_name,
        "manufacturer_data": {str(k): v.hex() for k, v in sorted(adv.manufacturer_data.items())},
        "service_data": {k: v.hex() for k, v in sorted(adv.service_data.items())},
        "service_uuids": sorted(adv.service_uuids),
        "tx_power": adv.tx_power,
        "rssi": adv.rssi,
    }


def error(exception: BaseException) -> str:
    return f"{type(exception).__name__}: {exception}"


async def until(condition: Callable[[], bool], seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def report(results: dict[str, Any]) -> None:
    print(json.dumps(results, indent=1, sort_keys=True))
