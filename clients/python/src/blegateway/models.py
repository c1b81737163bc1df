"""The gateway's JSON shapes (openapi.yaml, components/schemas) as dataclasses.

Byte values arrive as text in the encoding the gateway names beside them
(hex unless asked otherwise) and are decoded to `bytes` here, once.
Every object keeps the JSON it was read from in `raw`, so a member the
gateway adds later is not lost to a client older than it.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]


def decode_value(value: str, encoding: str) -> bytes:
    """Bytes from a JSON value and its `encoding` (hex, base64 or utf8)."""
    if encoding == "base64":
        return base64.b64decode(value)
    if encoding == "utf8":
        return value.encode()
    return bytes.fromhex(value)


def _value(obj: JSON) -> bytes:
    return decode_value(str(obj.get("value", "")), str(obj.get("encoding", "hex")))


def _int(obj: JSON, key: str) -> int | None:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(obj: JSON, key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Adapter:
    name: str
    address: str
    powered: bool
    discovering: bool
    state: str
    alias: str | None = None
    discoverable: bool | None = None
    pairable: bool | None = None
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: JSON) -> Adapter:
        return cls(
            name=obj["name"],
            address=obj["address"],
            powered=bool(obj["powered"]),
            discovering=bool(obj["discovering"]),
            state=obj["state"],
            alias=_str(obj, "alias"),
            discoverable=obj.get("discoverable"),
            pairable=obj.get("pairable"),
            raw=obj,
        )


@dataclass(frozen=True)
class GatewayInfo:
    name: str
    version: str
    bluez_available: bool
    simulated: bool
    adapters: list[Adapter]
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: JSON) -> GatewayInfo:
        bluez = obj.get("bluez", {})
        return cls(
            name=obj["name"],
            version=obj["version"],
            bluez_available=bool(bluez.get("available")),
            simulated=bool(bluez.get("simulated", False)),
            adapters=[Adapter.from_json(a) for a in obj.get("adapters", [])],
            raw=obj,
        )


@dataclass(frozen=True)
class Device:
    """A device as BlueZ knows it, with its advertisement data decoded."""

    address: str
    adapter: str
    connected: bool
    paired: bool
    services_resolved: bool
    address_type: str | None = None
    name: str | None = None
    alias: str | None = None
    rssi: int | None = None
    tx_power: int | None = None
    appearance: int | None = None
    service_uuids: list[str] = field(default_factory=list)
    manufacturer_data: dict[int, bytes] = field(default_factory=dict)
    """Keyed by company id."""
    service_data: dict[str, bytes] = field(default_factory=dict)
    """Keyed by service UUID (128-bit, lowercase)."""
    decoded: list[JSON] = field(default_factory=list)
    last_seen: str | None = None
    rssi_smoothed: float | None = None
    mtu: int | None = None
    bonded: bool | None = None
    trusted: bool | None = None
    blocked: bool | None = None
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: JSON) -> Device:
        smoothed = obj.get("rssi_smoothed")
        return cls(
            address=obj["address"],
            adapter=obj["adapter"],
            connected=bool(obj["connected"]),
            paired=bool(obj["paired"]),
            services_resolved=bool(obj["services_resolved"]),
            address_type=_str(obj, "address_type"),
            name=_str(obj, "name"),
            alias=_str(obj, "alias"),
            rssi=_int(obj, "rssi"),
            tx_power=_int(obj, "tx_power"),
            appearance=_int(obj, "appearance"),
            service_uuids=list(obj.get("service_uuids", [])),
            manufacturer_data={int(m["company_id"]): _value(m) for m in obj.get("manufacturer_data", {}).values()},
            service_data={uuid: _value(s) for uuid, s in obj.get("service_data", {}).items()},
            decoded=list(obj.get("decoded", [])),
            last_seen=_str(obj, "last_seen"),
            rssi_smoothed=float(smoothed) if isinstance(smoothed, (int, float)) else None,
            mtu=_int(obj, "mtu"),
            bonded=obj.get("bonded"),
            trusted=obj.get("trusted"),
            blocked=obj.get("blocked"),
            raw=obj,
        )


@dataclass(frozen=True)
class ScanResult:
    duration_ms: int
    devices: list[Device]

    @classmethod
    def from_json(cls, obj: JSON) -> ScanResult:
        return cls(duration_ms=int(obj["duration_ms"]), devices=[Device.from_json(d) for d in obj["devices"]])


@dataclass(frozen=True)
class Descriptor:
    uuid: str
    handle: int
    flags: list[str]
    name: str | None = None

    @classmethod
    def from_json(cls, obj: JSON) -> Descriptor:
        return cls(
            uuid=obj["uuid"], handle=int(obj["handle"]), flags=list(obj.get("flags", [])), name=_str(obj, "name")
        )


@dataclass(frozen=True)
class Characteristic:
    uuid: str
    handle: int
    service: str
    flags: list[str]
    descriptors: list[Descriptor]
    name: str | None = None
    mtu: int | None = None
    notifying: bool | None = None

    @classmethod
    def from_json(cls, obj: JSON) -> Characteristic:
        return cls(
            uuid=obj["uuid"],
            handle=int(obj["handle"]),
            service=obj["service"],
            flags=list(obj.get("flags", [])),
            descriptors=[Descriptor.from_json(d) for d in obj.get("descriptors", [])],
            name=_str(obj, "name"),
            mtu=_int(obj, "mtu"),
            notifying=obj.get("notifying"),
        )


@dataclass(frozen=True)
class Service:
    uuid: str
    handle: int
    primary: bool
    characteristics: list[Characteristic]
    name: str | None = None
    includes: list[JSON] = field(default_factory=list)

    @classmethod
    def from_json(cls, obj: JSON) -> Service:
        return cls(
            uuid=obj["uuid"],
            handle=int(obj["handle"]),
            primary=bool(obj["primary"]),
            characteristics=[Characteristic.from_json(c) for c in obj.get("characteristics", [])],
            name=_str(obj, "name"),
            includes=list(obj.get("includes", [])),
        )


@dataclass(frozen=True)
class StreamEvent:
    """One event of a stream: its SSE `event` name, its `id` (none for
    some, such as `replay-gap`) and its JSON `data`."""

    event: str
    id: int | None
    data: JSON


@dataclass(frozen=True)
class Notification:
    """A value a characteristic notified (or indicated)."""

    address: str
    characteristic: str
    value: bytes
    timestamp: str
    service: str | None = None
    handle: int | None = None
    adapter: str | None = None
    id: int | None = None

    @classmethod
    def from_event(cls, event: StreamEvent) -> Notification:
        obj = event.data
        return cls(
            address=obj["address"],
            characteristic=obj["characteristic"],
            value=_value(obj),
            timestamp=obj["timestamp"],
            service=_str(obj, "service"),
            handle=_int(obj, "handle"),
            adapter=_str(obj, "adapter"),
            id=event.id,
        )


@dataclass(frozen=True)
class SubscriptionStatus:
    """A notification stream's news other than a value:
    `subscription-interrupted` (BlueZ is away for now),
    `subscription-resumed`, or `subscription-ended` (the last event: the
    device disconnected, the gateway is stopping, ...), with the reason."""

    event: str
    reason: str | None
    detail: str | None

    @classmethod
    def from_event(cls, event: StreamEvent) -> SubscriptionStatus:
        return cls(event=event.event, reason=_str(event.data, "reason"), detail=_str(event.data, "detail"))


def notification_stream_event(event: StreamEvent) -> Notification | SubscriptionStatus:
    """An event of a notification stream, typed."""
    if event.event == "notification":
        return Notification.from_event(event)
    return SubscriptionStatus.from_event(event)


def notification_value(event: StreamEvent) -> bytearray | SubscriptionStatus:
    """An event of a notification stream with a value reduced to the value's
    bytes (a `bytearray`, which Bleak's callbacks receive); the others as
    `SubscriptionStatus`. For a reader that needs nothing but the value: it
    builds no `Notification` for each one."""
    if event.event != "notification":
        return SubscriptionStatus.from_event(event)
    data = event.data
    alone = data.get("data")
    if isinstance(alone, str):
        # `?format=value`: the value alone, in hex (a JSON string the stream
        # hands on as {"data": ...}).
        return bytearray.fromhex(alone)
    value = data.get("value", "")
    encoding = data.get("encoding", "hex")
    if encoding == "hex" and isinstance(value, str):
        return bytearray.fromhex(value)
    return bytearray(decode_value(str(value), str(encoding)))


@dataclass(frozen=True)
class ScanEvent:
    """An event of a scan stream: `discovered`, `updated` or `lost` with the
    device (and for `lost` the reason); `scan-interrupted`,
    `scan-resumed` or `scan-stopped` with the reason only."""

    event: str
    id: int | None
    device: Device | None
    reason: str | None

    @classmethod
    def from_event(cls, event: StreamEvent) -> ScanEvent:
        device = event.data.get("device")
        return cls(
            event=event.event,
            id=event.id,
            device=Device.from_json(device) if isinstance(device, dict) else None,
            reason=_str(event.data, "reason"),
        )


@dataclass(frozen=True)
class GatewayEvent:
    """One event of `GET /v1/events`. The members that event types share
    are typed; `data` holds the whole event as sent."""

    type: str
    id: int | None
    timestamp: str | None
    adapter: str | None
    address: str | None
    device: Device | None
    characteristic: str | None
    value: bytes | None
    reason: str | None
    data: JSON

    @classmethod
    def from_event(cls, event: StreamEvent) -> GatewayEvent:
        obj = event.data
        device = obj.get("device")
        return cls(
            type=event.event,
            id=event.id,
            timestamp=_str(obj, "timestamp"),
            adapter=_str(obj, "adapter"),
            address=_str(obj, "address"),
            device=Device.from_json(device) if isinstance(device, dict) else None,
            characteristic=_str(obj, "characteristic"),
            value=_value(obj) if "value" in obj else None,
            reason=_str(obj, "reason"),
            data=obj,
        )


@dataclass(frozen=True)
class PairingRequest:
    """A question of the gateway's pairing agent (a `pairing-request`).

    `kind`: `passkey` (answer the six digits the device shows), `pin-code`
    (answer a PIN), `confirmation` (does the device show `passkey` too?),
    `authorization`, `service-authorization` (yes or no), and
    `display-passkey`, `display-pin-code` (type `passkey` or `pin` on the
    device; nothing to answer).
    """

    id: str
    kind: str
    adapter: str
    address: str
    passkey: str | None = None
    pin: str | None = None
    service: str | None = None
    entered: int | None = None
    expires: str | None = None

    @classmethod
    def from_json(cls, obj: JSON) -> PairingRequest:
        return cls(
            id=obj["id"],
            kind=obj["kind"],
            adapter=obj["adapter"],
            address=obj["address"],
            passkey=_str(obj, "passkey"),
            pin=_str(obj, "pin"),
            service=_str(obj, "service"),
            entered=_int(obj, "entered"),
            expires=_str(obj, "expires"),
        )


@dataclass(frozen=True)
class KeptConnection:
    adapter: str
    address: str
    status: str
    failed_attempts: int
    max_attempts: int | None
    last_reason: str | None = None

    @classmethod
    def from_json(cls, obj: JSON) -> KeptConnection:
        return cls(
            adapter=obj["adapter"],
            address=obj["address"],
            status=obj["status"],
            failed_attempts=int(obj["failed_attempts"]),
            max_attempts=_int(obj, "max_attempts"),
            last_reason=_str(obj, "last_reason"),
        )


@dataclass(frozen=True)
class StandingSubscription:
    id: int
    adapter: str
    device: str
    characteristic: str
    mode: str
    status: str
    service: str | None = None
    last_reason: str | None = None

    @classmethod
    def from_json(cls, obj: JSON) -> StandingSubscription:
        return cls(
            id=int(obj["id"]),
            adapter=obj["adapter"],
            device=obj["device"],
            characteristic=obj["characteristic"],
            mode=obj["mode"],
            status=obj["status"],
            service=_str(obj, "service"),
            last_reason=_str(obj, "last_reason"),
        )


@dataclass(frozen=True)
class PublishedApplication:
    """A GATT application the gateway publishes (its services as JSON)."""

    id: str
    adapter: str
    registered: bool
    services: list[JSON]

    @classmethod
    def from_json(cls, obj: JSON) -> PublishedApplication:
        return cls(
            id=obj["id"], adapter=obj["adapter"], registered=bool(obj["registered"]), services=list(obj["services"])
        )


@dataclass(frozen=True)
class PublishedAdvertisement:
    """An advertisement the gateway has registered; `raw` has its data."""

    id: str
    adapter: str
    registered: bool
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: JSON) -> PublishedAdvertisement:
        return cls(id=obj["id"], adapter=obj["adapter"], registered=bool(obj["registered"]), raw=obj)


@dataclass(frozen=True)
class FleetHearing:
    """One gateway's hearing of a device in the fleet's merged view:
    `rssi_average` is its smoothed signal; `fresh` whether it was heard in
    the last 60 s."""

    gateway: str
    adapter: str | None
    rssi: int
    rssi_average: float
    last_seen: str | None
    fresh: bool

    @classmethod
    def from_json(cls, obj: JSON) -> FleetHearing:
        return cls(
            gateway=obj["gateway"],
            adapter=_str(obj, "adapter"),
            rssi=int(obj["rssi"]),
            rssi_average=float(obj.get("rssi_average") or obj["rssi"]),
            last_seen=_str(obj, "last_seen"),
            fresh=bool(obj.get("fresh", False)),
        )


@dataclass(frozen=True)
class FleetDevice:
    """A device as the whole fleet knows it (`GET /v1/fleet/devices/{address}`):
    who hears it (strongest average first), where it is connected, whether
    it is kept, and the fleet's holder of a device the fleet keeps."""

    address: str
    heard_by: list[FleetHearing]
    connected_on: list[str]
    kept: bool
    owner: str | None
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: JSON) -> FleetDevice:
        return cls(
            address=obj["address"],
            heard_by=[FleetHearing.from_json(h) for h in obj.get("heard_by", [])],
            connected_on=[str(g) for g in obj.get("connected_on", [])],
            kept=bool(obj.get("kept", False)),
            owner=_str(obj, "owner"),
            raw=obj,
        )
