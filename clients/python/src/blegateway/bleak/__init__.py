"""Bleak, through a blegateway.

    import blegateway.bleak
    blegateway.bleak.use("http://gateway.local:8080")   # the one added line

From then on `bleak.BleakScanner`, `bleak.BleakClient` and
`bleak.BleakAdapter` go through the gateway, as they would through the
local BlueZ. Or run an unchanged script with
`python -m blegateway.bleak --gateway URL script.py ARGS` (the URL and key
can also come from BLEGATEWAY_URL and BLEGATEWAY_API_KEY), or pick the
backend per object with `backend=GatewayBleakScanner` /
`backend=GatewayBleakClient`.

Through a fleet (docs/fleet.md: every device any gateway of the fleet
hears, through any one of them): `use(URL, fleet=True)`,
`python -m blegateway.bleak --gateway URL --fleet script.py`,
BLEGATEWAY_FLEET=1, or `fleet=True` among a scanner's or client's keyword
arguments.
"""

from __future__ import annotations

from typing import Any

import bleak

from .adapter import GatewayBleakAdapter
from .client import GatewayBleakClient
from .config import GatewayConfig, PairingCallback, configure
from .errors import BleakGatewayError
from .scanner import GatewayBleakScanner

__all__ = [
    "BleakGatewayError",
    "GatewayBleakAdapter",
    "GatewayBleakClient",
    "GatewayBleakScanner",
    "PairingCallback",
    "use",
]

GATEWAY_BACKEND = "blegateway"
"""The `backend_id` Bleak reports for objects that go through the gateway."""


def use(url: str, api_key: str | None = None, pairing: PairingCallback | None = None, *, fleet: bool = False) -> None:
    """Makes every `BleakScanner`, `BleakClient` and `BleakAdapter` made from
    now on (without a `backend=` of its own) go through the gateway at `url`.

    `fleet=True`: through the fleet that gateway is in (its `/v1/fleet/`
    routes, docs/fleet.md): scanning finds every device the fleet's
    gateways hear, and a client reaches its device through whichever
    gateway has it. Pairing is not carried by the fleet.

    `pairing` answers the gateway agent's pairing questions (a passkey, a
    PIN, a confirmation) for `BleakClient.pair()` and `pair=True`; see
    `PairingCallback`.

    Works whenever it is called, also after `from bleak import
    BleakScanner, BleakClient`: Bleak looks its platform backend up each
    time it makes one, and that lookup is what this replaces (as
    habluetooth does for Home Assistant's Bluetooth proxies).
    """
    configure(GatewayConfig(url.rstrip("/"), api_key, pairing, fleet))
    module: Any = bleak
    module.get_platform_scanner_backend_type = lambda: (GatewayBleakScanner, GATEWAY_BACKEND)
    module.get_platform_client_backend_type = lambda: (GatewayBleakClient, GATEWAY_BACKEND)
    module.get_platform_adapter_backend_type = lambda: (GatewayBleakAdapter, GATEWAY_BACKEND)
