"""Bleak's service explorer: every service, characteristic and descriptor, with their values."""

import asyncio
import sys
from typing import Any

from bleak import BleakClient
from common import error, report


async def explore(address: str) -> dict[str, Any]:
    async with BleakClient(address, timeout=20) as client:
        services = []
        for service in sorted(client.services, key=lambda s: s.handle):
            characteristics = []
            for char in sorted(service.characteristics, key=lambda c: c.handle):
                entry: dict[str, Any] = {
                    "uuid": char.uuid,
                    "handle": char.handle,
                    "properties": sorted(char.properties),
                    "description": char.description,
                    "service_handle": char.service_handle,
                    "max_write_without_response_size": char.max_write_without_response_size,
                }
                if "read" in char.properties:
                    try:
                        entry["value"] = (await client.read_gatt_char(char)).hex()
                    except Exception as e:
                        entry["error"] = error(e)
                descriptors = []
                for descriptor in sorted(char.descriptors, key=lambda d: d.handle):
                    try:
                        value = (await client.read_gatt_descriptor(descriptor)).hex()
                    except Exception as e:
                        value = error(e)
                    descriptors.append([descriptor.uuid, descriptor.handle, descriptor.description, value])
                entry["descriptors"] = descriptors
                characteristics.append(entry)
            services.append(
                {
                    "uuid": service.uuid,
                    "handle": service.handle,
                    "description": service.description,
                    "characteristics": characteristics,
                }
            )
        return {"address": client.address, "name": client.name, "connected": client.is_connected, "services": services}


async def main() -> None:
    report({address: await explore(address) for address in sys.argv[1:]})


asyncio.run(main())
