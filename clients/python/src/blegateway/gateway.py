"""`Gateway`: an asyncio client for blegateway's REST + SSE API."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import quote

import httpx

from .models import (
    JSON,
    Adapter,
    Characteristic,
    Device,
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
    SubscriptionStatus,
    decode_value,
    notification_stream_event,
    notification_value,
)
from .problem import GatewayUnreachable, problem_from_response
from .stream import EventStream, describe

Params = list[tuple[str, str]]

OCTETS = "application/octet-stream"


class Gateway:
    """A blegateway at `url` (`http://host:8080`), with its API key if it has one.

    Every method is a coroutine that returns typed results; an error
    response raises `GatewayProblem` (with `type`, `status`, `detail`,
    `dbus_error`, `att_error`), a gateway that does not answer
    `GatewayUnreachable`. Devices are named by address (any case, `:`,
    `-` or none between bytes), characteristics and descriptors by UUID
    (`2a37`, 128-bit) or by handle (an `int`, or `"handle:13"`).
    Timeouts are in seconds. Use it as `async with Gateway(url) as gw:`,
    or call `aclose()` when done.

    The stream methods return an `EventStream` to open with `async with`.
    `stream_timeout` is how long a stream may stay silent before it counts
    as broken (the gateway sends a heartbeat every 15 s by default);
    `reconnect_timeout` how long `events()` tries to resume after a break.
    """

    def __init__(
        self,
        url: str,
        api_key: str | None = None,
        *,
        timeout: float = 40.0,
        stream_timeout: float = 45.0,
        reconnect_timeout: float = 30.0,
    ) -> None:
        self.url = url.rstrip("/")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(
            base_url=self.url,
            headers=headers,
            timeout=timeout,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=20),
        )
        self._timeout = timeout
        self._stream_timeout = stream_timeout
        self._reconnect_timeout = reconnect_timeout

    async def __aenter__(self) -> Gateway:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # The gateway

    async def health(self) -> JSON:
        """`GET /health` (answered without the key): `status`, `bluez`, `state`, `detail`, `adapters`."""
        response = await self._request("GET", "/health", ok=(200, 503))
        document: JSON = response.json()
        return document

    async def info(self) -> GatewayInfo:
        return GatewayInfo.from_json(await self._json("GET", "/v1"))

    async def adapters(self) -> list[Adapter]:
        return [Adapter.from_json(a) for a in await self._json("GET", "/v1/adapters")]

    async def adapter(self, name: str) -> Adapter:
        return Adapter.from_json(await self._json("GET", f"/v1/adapters/{_seg(name)}"))

    async def set_powered(self, adapter: str, powered: bool, *, timeout: float | None = None) -> Adapter:
        body = {"powered": powered}
        return Adapter.from_json(await self._json("PATCH", f"/v1/adapters/{_seg(adapter)}", json=body, timeout=timeout))

    # Scanning

    async def scan(self, duration: float = 5.0, **filters: Any) -> ScanResult:
        """Scans for `duration` seconds (`POST /v1/scan`); `filters` as the
        request body takes them: `services=["180d"]`, `name`, `name_prefix`,
        `rssi`, `manufacturer`, `address`, `address_prefix`, `service_data`,
        `adapter`."""
        body = {"duration_ms": round(duration * 1000), **filters}
        return ScanResult.from_json(await self._json("POST", "/v1/scan", json=body, takes=duration))

    def scan_stream(
        self,
        *,
        services: Iterable[str] = (),
        duplicates: bool = False,
        adapter: str | None = None,
        duration: float | None = None,
        **filters: str | int | float | Iterable[str],
    ) -> EventStream[ScanEvent]:
        """Scans while the stream is open (`GET /v1/scan`). `filters` are the
        route's query parameters (`name`, `name_prefix`, `rssi`,
        `manufacturer`, `address`, `address_prefix`, `service_data`,
        `min_interval_ms`, `presence_timeout_ms`, `rssi_smoothing`, and for
        a passive scan `mode="passive"`, `pattern=["0:ff:4c00", ...]`,
        `fallback="low-duty"`)."""
        params: Params = [("service", s) for s in services]
        params += _query(duplicates="true" if duplicates else None, adapter=adapter, duration_ms=_ms(duration))
        for key, value in filters.items():
            values = [value] if isinstance(value, (str, int, float)) else list(value)
            params += [(key, str(v)) for v in values]
        return self._stream("/v1/scan", params, ScanEvent.from_event)

    # Devices

    async def devices(
        self, *, connected: bool | None = None, services: Iterable[str] = (), adapter: str | None = None
    ) -> list[Device]:
        params = [("service", s) for s in services]
        params += _query(connected=None if connected is None else str(connected).lower(), adapter=adapter)
        return [Device.from_json(d) for d in await self._json("GET", "/v1/devices", params=params)]

    async def device(self, address: str, *, adapter: str | None = None) -> Device:
        return Device.from_json(await self._json("GET", _device(address), params=_query(adapter=adapter)))

    async def forget(self, address: str, *, adapter: str | None = None, timeout: float | None = None) -> None:
        """Disconnects the device and removes it and its pairing."""
        await self._request("DELETE", _device(address), params=_query(adapter=adapter), timeout=timeout)

    async def update_device(
        self, address: str, *, trusted: bool | None = None, blocked: bool | None = None, adapter: str | None = None
    ) -> Device:
        body = {k: v for k, v in (("trusted", trusted), ("blocked", blocked)) if v is not None}
        return Device.from_json(await self._json("PATCH", _device(address), params=_query(adapter=adapter), json=body))

    async def connect(self, address: str, *, adapter: str | None = None, timeout: float | None = None) -> Device:
        """Connects and resolves the services; looks for a device BlueZ does
        not know yet within `timeout`."""
        return Device.from_json(
            await self._json("POST", f"{_device(address)}/connect", params=_query(adapter=adapter), timeout=timeout)
        )

    async def disconnect(self, address: str, *, adapter: str | None = None, timeout: float | None = None) -> Device:
        return Device.from_json(
            await self._json("POST", f"{_device(address)}/disconnect", params=_query(adapter=adapter), timeout=timeout)
        )

    # Pairing

    async def pair(self, address: str, *, adapter: str | None = None, timeout: float | None = None) -> Device:
        """Pairs and bonds; the agent's questions come as `pairing-request`
        events (`events(types=["pairing-request"], device=address)`),
        answered with `answer_pairing_request`."""
        return Device.from_json(
            await self._json("POST", f"{_device(address)}/pair", params=_query(adapter=adapter), timeout=timeout)
        )

    async def unpair(self, address: str, *, adapter: str | None = None, timeout: float | None = None) -> None:
        await self._request("DELETE", f"{_device(address)}/pair", params=_query(adapter=adapter), timeout=timeout)

    async def pairing_requests(self) -> list[PairingRequest]:
        return [PairingRequest.from_json(r) for r in await self._json("GET", "/v1/pairing-requests")]

    async def answer_pairing_request(
        self, request_id: str, *, passkey: int | None = None, pin: str | None = None, confirm: bool | None = None
    ) -> None:
        """Answers with one of: `passkey` (a `passkey` request), `pin` (`pin-code`),
        `confirm` (`confirmation`, `authorization`; False rejects any)."""
        answer = {k: v for k, v in (("passkey", passkey), ("pin", pin), ("confirm", confirm)) if v is not None}
        if len(answer) != 1:
            raise ValueError("answer with exactly one of passkey, pin or confirm")
        await self._request("POST", f"/v1/pairing-requests/{_seg(request_id)}", json=answer)

    # Keeping devices connected

    async def keep(
        self, address: str, *, max_attempts: int | None = None, adapter: str | None = None
    ) -> KeptConnection:
        body = {} if max_attempts is None else {"max_attempts": max_attempts}
        return KeptConnection.from_json(
            await self._json("PUT", f"{_device(address)}/keep", params=_query(adapter=adapter), json=body)
        )

    async def kept(self, address: str, *, adapter: str | None = None) -> KeptConnection:
        return KeptConnection.from_json(
            await self._json("GET", f"{_device(address)}/keep", params=_query(adapter=adapter))
        )

    async def release(self, address: str, *, adapter: str | None = None) -> None:
        await self._request("DELETE", f"{_device(address)}/keep", params=_query(adapter=adapter))

    async def kept_connections(self) -> list[KeptConnection]:
        return [KeptConnection.from_json(k) for k in await self._json("GET", "/v1/kept-connections")]

    # GATT

    async def services(
        self, address: str, *, services: Iterable[str] = (), adapter: str | None = None
    ) -> list[Service]:
        params = [("service", s) for s in services] + _query(adapter=adapter)
        return [Service.from_json(s) for s in await self._json("GET", f"{_device(address)}/services", params=params)]

    async def characteristic(
        self, address: str, characteristic: str | int, *, service: str | None = None, adapter: str | None = None
    ) -> Characteristic:
        path = _characteristic(address, characteristic)
        return Characteristic.from_json(await self._json("GET", path, params=_query(service=service, adapter=adapter)))

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
        """Reads a characteristic's value; `pair=True` pairs first if the device asks for it."""
        params = _gatt_query(service, adapter, offset, pair)
        response = await self._request(
            "GET",
            f"{_characteristic(address, characteristic)}/value",
            params=params,
            headers={"Accept": OCTETS},
            timeout=timeout,
        )
        return response.content

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
        """Writes with response (`response=False`: a write command, at most MTU-3 bytes)."""
        params = [*_gatt_query(service, adapter, offset, pair), ("type", "request" if response else "command")]
        await self._request(
            "PUT",
            f"{_characteristic(address, characteristic)}/value",
            params=params,
            content=bytes(value),
            headers={"Content-Type": OCTETS},
            timeout=timeout,
        )

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
        params = _gatt_query(service, adapter, offset, False)
        response = await self._request(
            "GET",
            _descriptor(address, characteristic, descriptor),
            params=params,
            headers={"Accept": OCTETS},
            timeout=timeout,
        )
        return response.content

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
        params = _gatt_query(service, adapter, offset, False)
        await self._request(
            "PUT",
            _descriptor(address, characteristic, descriptor),
            params=params,
            content=bytes(value),
            headers={"Content-Type": OCTETS},
            timeout=timeout,
        )

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
        """Subscribes while the stream is open: `Notification`s, and a
        `SubscriptionStatus` when the subscription is interrupted, resumes or
        ends (`subscription-ended` is the last event). `buffer_kib`: how much
        the gateway may hold while this client does not read (default 256;
        the gateway caps it to its `--stream-buffer-max`); past it the
        stream is dropped."""
        params = _query(service=service, adapter=adapter, duration_ms=_ms(duration), buffer_kib=buffer_kib)
        return self._stream(_notifications(address, characteristic), params, notification_stream_event)

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
        """`notifications()` with each value as its bytes alone (a
        `bytearray`): for a reader that needs only the values, at less cost
        per value (the Bleak backend's callbacks). The gateway sends each
        value alone (`?format=value`), so there is little to decode."""
        params = _query(
            service=service, adapter=adapter, duration_ms=_ms(duration), buffer_kib=buffer_kib, format="value"
        )
        return self._stream(_notifications(address, characteristic), params, notification_value)

    # Standing subscriptions

    async def subscribe(
        self,
        address: str,
        characteristic: str | int,
        *,
        service: str | None = None,
        mode: str = "notify",
        adapter: str | None = None,
    ) -> StandingSubscription:
        """Subscribes for good: values go to `events()` as `characteristic-value`."""
        body = {"device": address, "characteristic": _attribute(characteristic), "mode": mode}
        body.update({k: v for k, v in (("service", service), ("adapter", adapter)) if v is not None})
        return StandingSubscription.from_json(await self._json("POST", "/v1/subscriptions", json=body))

    async def subscriptions(self) -> list[StandingSubscription]:
        return [StandingSubscription.from_json(s) for s in await self._json("GET", "/v1/subscriptions")]

    async def subscription(self, subscription_id: int) -> StandingSubscription:
        return StandingSubscription.from_json(await self._json("GET", f"/v1/subscriptions/{int(subscription_id)}"))

    async def unsubscribe(self, subscription_id: int) -> None:
        await self._request("DELETE", f"/v1/subscriptions/{int(subscription_id)}")

    # Events

    def events(
        self,
        *,
        types: Iterable[str] = (),
        device: str | None = None,
        last_event_id: int | None = None,
        duration: float | None = None,
        on_reconnect: Callable[[], Awaitable[None]] | None = None,
    ) -> EventStream[GatewayEvent]:
        """Everything that happens (`GET /v1/events`), from after
        `last_event_id` if given (0: all the gateway still keeps). Resumes by
        itself after a broken connection with `Last-Event-ID`, calling
        `on_reconnect` each time it has."""
        params = [("type", ",".join(types))] if types else []
        params += _query(device=device, duration_ms=_ms(duration))
        return self._stream(
            "/v1/events",
            params,
            GatewayEvent.from_event,
            resumable=duration is None,
            last_event_id=last_event_id,
            on_reconnect=on_reconnect,
        )

    # The peripheral role

    async def publish_application(self, application: JSON) -> PublishedApplication:
        """Publishes GATT services (the body of `POST /v1/peripheral/applications`)."""
        return PublishedApplication.from_json(await self._json("POST", "/v1/peripheral/applications", json=application))

    async def applications(self) -> list[PublishedApplication]:
        return [PublishedApplication.from_json(a) for a in await self._json("GET", "/v1/peripheral/applications")]

    async def application(self, application_id: str) -> PublishedApplication:
        path = f"/v1/peripheral/applications/{_seg(application_id)}"
        return PublishedApplication.from_json(await self._json("GET", path))

    async def unpublish_application(self, application_id: str) -> None:
        await self._request("DELETE", f"/v1/peripheral/applications/{_seg(application_id)}")

    async def local_value(self, application_id: str, characteristic: str) -> bytes:
        """The value a published characteristic holds."""
        path = f"/v1/peripheral/applications/{_seg(application_id)}/characteristics/{_seg(characteristic)}/value"
        value = await self._json("GET", path)
        return decode_value(value["value"], value.get("encoding", "hex"))

    async def set_local_value(self, application_id: str, characteristic: str, value: bytes) -> bool:
        """Sets a published characteristic's value and notifies subscribed
        centrals; True if one was notified."""
        path = f"/v1/peripheral/applications/{_seg(application_id)}/characteristics/{_seg(characteristic)}/value"
        answer = await self._json("PUT", path, json={"value": bytes(value).hex()})
        return bool(answer.get("notified", False))

    async def answer_request(
        self, request_id: str, *, value: bytes | None = None, att_error: int | None = None
    ) -> None:
        """Answers a central's read or write (a `request` peripheral event)."""
        body: JSON = {"att_error": att_error} if att_error is not None else {"value": bytes(value or b"").hex()}
        await self._request("POST", f"/v1/peripheral/requests/{_seg(request_id)}", json=body)

    def peripheral_events(self) -> EventStream[GatewayEvent]:
        """What centrals do to the published applications (`GET /v1/peripheral/events`)."""
        return self._stream("/v1/peripheral/events", [], GatewayEvent.from_event)

    async def advertise(self, advertisement: JSON) -> PublishedAdvertisement:
        """Registers an advertisement (the body of `POST /v1/peripheral/advertisements`)."""
        path = "/v1/peripheral/advertisements"
        return PublishedAdvertisement.from_json(await self._json("POST", path, json=advertisement))

    async def advertisements(self) -> list[PublishedAdvertisement]:
        return [PublishedAdvertisement.from_json(a) for a in await self._json("GET", "/v1/peripheral/advertisements")]

    async def advertisement(self, advertisement_id: str) -> PublishedAdvertisement:
        path = f"/v1/peripheral/advertisements/{_seg(advertisement_id)}"
        return PublishedAdvertisement.from_json(await self._json("GET", path))

    async def stop_advertisement(self, advertisement_id: str) -> None:
        await self._request("DELETE", f"/v1/peripheral/advertisements/{_seg(advertisement_id)}")

    async def advertising_capacity(self, *, adapter: str | None = None) -> JSON:
        capacity: JSON = await self._json("GET", "/v1/peripheral/advertising", params=_query(adapter=adapter))
        return capacity

    # Plumbing

    async def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        return (await self._request(method, path, **kwargs)).json()

    async def _request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        timeout: float | None = None,
        takes: float | None = None,
        ok: tuple[int, ...] = (),
        **kwargs: Any,
    ) -> httpx.Response:
        """`timeout`: the gateway's `timeout_ms` for the operation; `takes`: how
        long the request takes by design (a timed scan). The answer is
        awaited that long and a little longer."""
        params = list(params or [])
        if timeout is not None:
            params.append(("timeout_ms", str(max(1, min(120_000, round(timeout * 1000))))))
        longest = timeout if timeout is not None else takes
        http_timeout = self._timeout if longest is None else max(self._timeout, longest + 10.0)
        try:
            response = await self._http.request(method, path, params=tuple(params), timeout=http_timeout, **kwargs)
        except httpx.TransportError as error:
            raise GatewayUnreachable(self.url, describe(error)) from error
        if response.status_code >= 400 and response.status_code not in ok:
            raise problem_from_response(response)
        return response

    def _stream(
        self,
        path: str,
        params: Params,
        parse: Callable[[Any], Any],
        *,
        resumable: bool = False,
        last_event_id: int | None = None,
        on_reconnect: Callable[[], Awaitable[None]] | None = None,
    ) -> EventStream[Any]:
        return EventStream(
            self._http,
            self.url,
            path,
            params,
            parse,
            resumable=resumable,
            last_event_id=last_event_id,
            read_timeout=self._stream_timeout,
            reconnect_timeout=self._reconnect_timeout,
            on_reconnect=on_reconnect,
        )


def _seg(text: str) -> str:
    return quote(text, safe=":")


def _device(address: str) -> str:
    return f"/v1/devices/{_seg(address)}"


def _attribute(name: str | int) -> str:
    return f"handle:{name}" if isinstance(name, int) else name


def _characteristic(address: str, characteristic: str | int) -> str:
    return f"{_device(address)}/characteristics/{_seg(_attribute(characteristic))}"


def _descriptor(address: str, characteristic: str | int, descriptor: str | int) -> str:
    return f"{_characteristic(address, characteristic)}/descriptors/{_seg(_attribute(descriptor))}/value"


def _notifications(address: str, characteristic: str | int) -> str:
    return f"{_characteristic(address, characteristic)}/notifications"


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else max(1, round(seconds * 1000))


def _query(**values: str | int | None) -> Params:
    return [(key, str(value)) for key, value in values.items() if value is not None]


def _gatt_query(service: str | None, adapter: str | None, offset: int, pair: bool) -> Params:
    return _query(service=service, adapter=adapter, offset=offset or None, pair="auto" if pair else None)
