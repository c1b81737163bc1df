"""`Fleet`: the fleet behind one gateway's `/v1/fleet/` routes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from .gateway import Gateway, Params, _attribute, _ms, _query, _seg
from .models import (
    JSON,
    Characteristic,
    Device,
    FleetDevice,
    GatewayEvent,
    Notification,
    Service,
    SubscriptionStatus,
    decode_value,
    notification_stream_event,
    notification_value,
)
from .stream import EventStream


class Fleet(Gateway):
    """Every device of a fleet, through any one of its gateways (docs/fleet.md).

    The device operations the fleet forwards go through
    `/v1/fleet/devices/...`, so they reach the gateway that has the device
    (connected there, else the one that hears it best), whichever gateway
    `url` names: `connect`, `disconnect`, `services`, `characteristic`,
    `read`, `write`, `read_descriptor`, `write_descriptor`,
    `notifications`, `notification_values`, and `events` (the fleet's
    combined stream, each event's `data` tagged with its `gateway`). The
    others (pairing, adapters, scans, the peripheral role, ...) stay those
    of the gateway at `url`.

    Values travel as JSON (the fleet forwards no raw bytes). The fleet
    forwards no read `offset` of a characteristic: a read with one raises
    `ValueError`.
    """

    def __init__(self, url: str, api_key: str | None = None, **options: Any) -> None:
        super().__init__(url, api_key, **options)
        self._holders: dict[str, str] = {}

    async def __aenter__(self) -> Fleet:
        return self

    def holder(self, address: str) -> str | None:
        """The gateway that answered the latest forwarded command for
        `address` (its `Gateway` header), if one has."""
        return self._holders.get(address.upper())

    # The merged view

    async def fleet_devices(self) -> list[FleetDevice]:
        return [FleetDevice.from_json(d) for d in await self._json("GET", "/v1/fleet/devices")]

    async def fleet_device(self, address: str) -> FleetDevice:
        return FleetDevice.from_json(await self._json("GET", _fleet_device(address)))

    async def gateways(self) -> list[JSON]:
        """`GET /v1/fleet/gateways`: each gateway's `id`, `online`, counts and slots."""
        found: list[JSON] = await self._json("GET", "/v1/fleet/gateways")
        return found

    # Forwarded operations

    async def connect(self, address: str, *, adapter: str | None = None, timeout: float | None = None) -> Device:
        path = f"{_fleet_device(address)}/connect"
        return Device.from_json(
            await self._forwarded("POST", address, path, params=_query(adapter=adapter), timeout=timeout)
        )

    async def disconnect(self, address: str, *, adapter: str | None = None, timeout: float | None = None) -> Device:
        path = f"{_fleet_device(address)}/disconnect"
        return Device.from_json(
            await self._forwarded("POST", address, path, params=_query(adapter=adapter), timeout=timeout)
        )

    async def services(
        self, address: str, *, services: Iterable[str] = (), adapter: str | None = None
    ) -> list[Service]:
        params = [("service", s) for s in services] + _query(adapter=adapter)
        found = await self._forwarded("GET", address, f"{_fleet_device(address)}/services", params=params)
        return [Service.from_json(s) for s in found]

    async def characteristic(
        self, address: str, characteristic: str | int, *, service: str | None = None, adapter: str | None = None
    ) -> Characteristic:
        path = _fleet_characteristic(address, characteristic)
        return Characteristic.from_json(
            await self._forwarded("GET", address, path, params=_query(service=service, adapter=adapter))
        )

    async def read(
        self,
        address: str,
        characteristic: str | int,
        *,
        service: str | None = None,
        offset: int = 0,
        pair: bool = False,
        adapter: str | None = None,
        timeout: float | None = None,
    ) -> bytes:
        """Reads a characteristic's value through the gateway that has the
        device (`pair=True` is refused: the fleet forwards no pairing)."""
        if offset:
            raise ValueError("the fleet forwards no read offset; read through the gateway that has the device")
        if pair:
            raise ValueError("the fleet forwards no pairing; pair through the gateway that has the device")
        path = f"{_fleet_characteristic(address, characteristic)}/value"
        params = _query(service=service, adapter=adapter, encoding="base64")
        return _bytes(await self._forwarded("GET", address, path, params=params, timeout=timeout))

    async def write(
        self,
        address: str,
        characteristic: str | int,
        value: bytes,
        *,
        response: bool = True,
        service: str | None = None,
        offset: int = 0,
        pair: bool = False,
        adapter: str | None = None,
        timeout: float | None = None,
    ) -> None:
        if pair:
            raise ValueError("the fleet forwards no pairing; pair through the gateway that has the device")
        body: JSON = {"value": bytes(value).hex(), "type": "request" if response else "command"}
        if offset:
            body["offset"] = offset
        path = f"{_fleet_characteristic(address, characteristic)}/value"
        params = _query(service=service, adapter=adapter)
        await self._forwarded("PUT", address, path, params=params, json=body, timeout=timeout)

    async def read_descriptor(
        self,
        address: str,
        characteristic: str | int,
        descriptor: str | int,
        *,
        service: str | None = None,
        offset: int = 0,
        adapter: str | None = None,
        timeout: float | None = None,
    ) -> bytes:
        params = _query(service=service, adapter=adapter, offset=offset or None, encoding="base64")
        path = _fleet_descriptor(address, characteristic, descriptor)
        return _bytes(await self._forwarded("GET", address, path, params=params, timeout=timeout))

    async def write_descriptor(
        self,
        address: str,
        characteristic: str | int,
        descriptor: str | int,
        value: bytes,
        *,
        service: str | None = None,
        offset: int = 0,
        adapter: str | None = None,
        timeout: float | None = None,
    ) -> None:
        body: JSON = {"value": bytes(value).hex()}
        if offset:
            body["offset"] = offset
        path = _fleet_descriptor(address, characteristic, descriptor)
        params = _query(service=service, adapter=adapter)
        await self._forwarded("PUT", address, path, params=params, json=body, timeout=timeout)

    def notifications(
        self,
        address: str,
        characteristic: str | int,
        *,
        service: str | None = None,
        adapter: str | None = None,
        duration: float | None = None,
        buffer_kib: int | None = None,
    ) -> EventStream[Notification | SubscriptionStatus]:
        """The notifications of the gateway that has the device, under a
        lease there for as long as the stream is open."""
        params = _query(service=service, adapter=adapter, duration_ms=_ms(duration), buffer_kib=buffer_kib)
        path = f"{_fleet_characteristic(address, characteristic)}/notifications"
        return self._stream(path, params, notification_stream_event)

    def notification_values(
        self,
        address: str,
        characteristic: str | int,
        *,
        service: str | None = None,
        adapter: str | None = None,
        duration: float | None = None,
        buffer_kib: int | None = None,
    ) -> EventStream[bytearray | SubscriptionStatus]:
        params = _query(
            service=service, adapter=adapter, duration_ms=_ms(duration), buffer_kib=buffer_kib, format="value"
        )
        path = f"{_fleet_characteristic(address, characteristic)}/notifications"
        return self._stream(path, params, notification_value)

    def events(
        self,
        *,
        types: Iterable[str] = (),
        device: str | None = None,
        last_event_id: int | None = None,
        duration: float | None = None,
        on_reconnect: Callable[[], Awaitable[None]] | None = None,
    ) -> EventStream[GatewayEvent]:
        """The fleet's combined stream (`GET /v1/fleet/events`), each
        event's `data` with the `gateway` that published it. The route
        filters by device only: `types` is not sent, and events of every
        type arrive (a reader skips those it does not want). Its ids are
        the serving gateway's; it resumes with `Last-Event-ID` as
        `Gateway.events` does."""
        params: Params = _query(device=device, duration_ms=_ms(duration))
        return self._stream(
            "/v1/fleet/events",
            params,
            GatewayEvent.from_event,
            resumable=duration is None,
            last_event_id=last_event_id,
            on_reconnect=on_reconnect,
        )

    # Plumbing

    async def _forwarded(self, method: str, address: str, path: str, **kwargs: Any) -> Any:
        """A forwarded request's JSON (None for 204), noting who answered."""
        response = await self._request(method, path, **kwargs)
        answering = response.headers.get("Gateway")
        if answering:
            self._holders[address.upper()] = answering
        return None if response.status_code == 204 or not response.content else response.json()


def _bytes(value: JSON) -> bytes:
    return decode_value(str(value.get("value", "")), str(value.get("encoding", "hex")))


def _fleet_device(address: str) -> str:
    return f"/v1/fleet/devices/{_seg(address)}"


def _fleet_characteristic(address: str, characteristic: str | int) -> str:
    return f"{_fleet_device(address)}/characteristics/{_seg(_attribute(characteristic))}"


def _fleet_descriptor(address: str, characteristic: str | int, descriptor: str | int) -> str:
    return f"{_fleet_characteristic(address, characteristic)}/descriptors/{_seg(_attribute(descriptor))}/value"
