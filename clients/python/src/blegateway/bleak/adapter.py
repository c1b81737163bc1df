"""`GatewayBleakAdapter`: Bleak's adapter backend (connected devices) over a gateway."""

from __future__ import annotations

from typing import Any

from bleak.backends.adapter import BaseBleakAdapter
from bleak.backends.device import BLEDevice

from ..problem import GatewayError
from .config import GatewayConfig, current
from .errors import bleak_error
from .scanner import ble_device


class GatewayBleakAdapter(BaseBleakAdapter):
    """`BleakAdapter.get()` through a gateway: the devices connected on its adapter."""

    def __init__(self, config: GatewayConfig, adapter: str | None) -> None:
        self._config = config
        self._adapter = adapter

    @classmethod
    async def get(cls, *, bluez: dict[str, Any] | None = None, **kwargs: Any) -> GatewayBleakAdapter:
        return cls(current(kwargs.get("gateway"), kwargs.get("api_key")), (bluez or {}).get("adapter"))

    async def get_connected_devices(self, service_uuids: frozenset[str]) -> list[BLEDevice]:
        async with self._config.gateway() as gateway:
            try:
                devices = await gateway.devices(connected=True, services=sorted(service_uuids), adapter=self._adapter)
            except GatewayError as error:
                raise bleak_error(error) from error
        return [ble_device(device) for device in devices]
