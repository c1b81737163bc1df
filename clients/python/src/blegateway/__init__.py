"""blegateway: Python clients for blegateway, the BLE-to-HTTP gateway.

`Gateway` is an asyncio client for the gateway's REST + SSE API, `Fleet`
the same for every device of a fleet through any of its gateways;
`blegateway.bleak` puts Bleak's `BleakScanner` and `BleakClient` through a
gateway.
"""

from .fleet import Fleet
from .gateway import Gateway
from .models import (
    Adapter,
    Characteristic,
    Descriptor,
    Device,
    FleetDevice,
    FleetHearing,
    GatewayEvent,
    GatewayInfo,
    KeptConnection,
    Notification,
    PairingRequest,
    PublishedAdvertisement,
    PublishedApplication,
    ScanEvent,
    ScanResult,
    Service,
    StandingSubscription,
    StreamEvent,
    SubscriptionStatus,
)
from .problem import GatewayError, GatewayProblem, GatewayUnreachable
from .stream import EventStream

__all__ = [
    "Adapter",
    "Characteristic",
    "Descriptor",
    "Device",
    "EventStream",
    "Fleet",
    "FleetDevice",
    "FleetHearing",
    "Gateway",
    "GatewayError",
    "GatewayEvent",
    "GatewayInfo",
    "GatewayProblem",
    "GatewayUnreachable",
    "KeptConnection",
    "Notification",
    "PairingRequest",
    "PublishedAdvertisement",
    "PublishedApplication",
    "ScanEvent",
    "ScanResult",
    "Service",
    "StandingSubscription",
    "StreamEvent",
    "SubscriptionStatus",
]

__version__ = "0.1.0"
