"""`GatewayBleakClient`: Bleak's client backend over a gateway's HTTP API."""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from bleak.args import SizedBuffer
from bleak.backends.characteristic import BleakGATTCharacteristic
from bleak.backends.client import BaseBleakClient, NotifyCallback
from bleak.backends.descriptor import BleakGATTDescriptor
from bleak.backends.device import BLEDevice
from bleak.backends.service import BleakGATTService, BleakGATTServiceCollection
from bleak.exc import BleakDeviceNotFoundError, BleakError

from ..fleet import Fleet
from ..gateway import Gateway
from ..models import Characteristic, Device, GatewayEvent, PairingRequest, Service, SubscriptionStatus
from ..problem import GatewayError, GatewayProblem, GatewayUnreachable
from ..stream import EventStream
from .config import current
from .errors import bleak_error

logger = logging.getLogger(__name__)

T = TypeVar("T")

NOTIFY_RETRY_SECONDS = 0.5
"""Pause before a broken notification stream is opened again."""

NOTIFICATION_BUFFER_KIB = 16384
"""The buffer a notification stream asks of the gateway (its default
`--stream-buffer-max`; a gateway with a lower one caps it)."""

LINK_EVENTS = ("device-disconnected", "device-unpaired")
"""The events that say the link this client holds is gone."""

LINK_UP_EVENTS = ("device-connected", "services-resolved")
"""The events that say a link is up."""

FLEET_LATE_EVENT_SECONDS = 5.0
"""Through a fleet, how long after connecting a link event may still be
one of an earlier link, late on the broker (a disconnection just before
this connection); one that comes before the holder's own connection event
is checked against the fleet's view after that long."""

# Subscription endings after which the stream may be opened again: the
# gateway stops (and comes back) or BlueZ was away; after the others the
# link itself is gone, which the link watch reports.
_REOPEN_AFTER = frozenset({"gateway-stopping", "bluez-unavailable"})


class _LinkLost(Exception):
    """The device is found disconnected after the gateway came back."""


class GatewayBleakClient(BaseBleakClient):
    """Connects through a gateway (`POST /v1/devices/{address}/connect`).

    For `BleakClient(address, backend=GatewayBleakClient)`; the gateway is
    the one `blegateway.bleak.use()` named, or `BLEGATEWAY_URL`, or
    `gateway="http://..."` among the client's keyword arguments;
    `bluez={"adapter": "hci1"}` picks the gateway's adapter.

    Through a fleet (`use(url, fleet=True)`, BLEGATEWAY_FLEET=1 or
    `fleet=True` here), every operation goes through
    `/v1/fleet/devices/...` to the gateway that has the device, and the
    link is followed on the fleet's event stream (the events of that
    gateway); pairing is not carried by the fleet.

    While connected it follows the device's events on the gateway
    (resuming with `Last-Event-ID` when the connection to the gateway
    breaks), so the disconnected callback fires when the link drops, when
    the device goes away, and when the gateway stays unreachable; a
    notification stream that breaks is opened again while the link lasts.
    """

    def __init__(
        self,
        address_or_ble_device: BLEDevice | str,
        services: set[str] | None = None,
        *,
        disconnected_callback: Callable[[], None] | None = None,
        timeout: float = 30.0,
        bluez: dict[str, Any] | None = None,
        gateway: str | None = None,
        api_key: str | None = None,
        fleet: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(address_or_ble_device, disconnected_callback=disconnected_callback, timeout=timeout)
        self._config = current(gateway, api_key, fleet)
        self._adapter: str | None = (bluez or {}).get("adapter")
        self._requested_services = services
        self._gateway: Gateway | None = None
        self._device: Device | None = None
        self._connected = False
        self._watch: asyncio.Task[None] | None = None
        self._connected_at = 0.0
        self._notifications: dict[int, asyncio.Task[None]] = {}

    # Connectivity

    @property
    def name(self) -> str:
        if self._device is None:
            raise BleakError("Not connected")
        return self._device.alias or self.address.replace(":", "-")

    @property
    def mtu_size(self) -> int:
        """The ATT MTU the gateway reports for the link (23 before one is known)."""
        if self._device is None or self._device.mtu is None:
            return 23
        return self._device.mtu

    @property
    def is_connected(self) -> bool:
        return self._connected

    async def connect(self, pair: bool, **kwargs: Any) -> None:
        if self.is_connected:
            raise BleakError("Client is already connected")
        await self._close()  # what a link lost earlier left
        timeout = float(kwargs.get("timeout", self._timeout))
        if pair:
            self._refuse_pairing_through_fleet()
        gateway = self._config.gateway()
        watch = gateway.events(types=LINK_EVENTS, device=self.address, on_reconnect=self._check_link)
        try:
            # Following the device's events before connecting leaves no
            # moment in which a disconnection could go unseen.
            await self._gateway_call(watch.open())
            if pair:
                device = await self._pair(gateway, timeout)
            else:
                device = await self._reaching(
                    gateway, gateway.connect(self.address, adapter=self._adapter, timeout=timeout)
                )
            services = await self._gateway_call(gateway.services(self.address, adapter=self._adapter))
        except BaseException:
            await watch.aclose()
            await gateway.aclose()
            raise
        self._gateway = gateway
        self._device = device
        self.services = self._collection(services)
        self._connected = True
        self._connected_at = asyncio.get_running_loop().time()
        self._watch = asyncio.create_task(self._follow_link(watch))

    async def disconnect(self) -> None:
        gateway = self._gateway
        if gateway is None:
            return
        try:
            if self._connected:
                await self._gateway_call(gateway.disconnect(self.address, adapter=self._adapter, timeout=10.0))
        except BleakError as error:
            if not isinstance(error.__cause__, GatewayUnreachable):
                raise
            logger.warning("disconnect: %s", error)
        finally:
            self._on_disconnected()
            await self._close()

    async def pair(self, *args: Any, **kwargs: Any) -> None:
        """Pairs, answering the gateway agent's questions with the `pairing`
        callback given to `blegateway.bleak.use()`."""
        self._refuse_pairing_through_fleet()
        async with self._session() as gateway:
            device = await self._gateway_call(gateway.device(self.address, adapter=self._adapter), device_op=True)
            if device.paired:
                logger.debug("BLE device @ %s is already paired", self.address)
                return
            device = await self._pair(gateway, float(kwargs.get("timeout", self._timeout)))
            self.address = device.address

    async def unpair(self) -> None:
        self._refuse_pairing_through_fleet()
        async with self._session() as gateway:
            await self._gateway_call(gateway.unpair(self.address, adapter=self._adapter), device_op=True)
        self._on_disconnected()

    async def _acquire_mtu(self) -> None:
        """Reads the link's MTU again (the name Bleak's BlueZ backend uses)."""
        gateway = self._require_connected()
        if isinstance(gateway, Fleet):
            return  # the fleet forwards no device lookup: the MTU stays the connect's
        self._device = await self._gateway_call(gateway.device(self.address, adapter=self._adapter))

    # GATT

    async def read_gatt_char(
        self, characteristic: BleakGATTCharacteristic, *, use_cached: bool = False, **kwargs: Any
    ) -> bytearray:
        """Reads the value from the device (`use_cached` is ignored: the
        gateway keeps no cache of values)."""
        gateway = self._require_connected()
        value = await self._gateway_call(
            gateway.read(self.address, characteristic.handle, adapter=self._adapter), gatt=True
        )
        return bytearray(value)

    async def read_gatt_descriptor(
        self, descriptor: BleakGATTDescriptor, *, use_cached: bool = False, **kwargs: Any
    ) -> bytearray:
        gateway = self._require_connected()
        value = await self._gateway_call(
            gateway.read_descriptor(
                self.address, descriptor.characteristic_handle, descriptor.handle, adapter=self._adapter
            ),
            gatt=True,
        )
        return bytearray(value)

    async def write_gatt_char(self, characteristic: BleakGATTCharacteristic, data: SizedBuffer, response: bool) -> None:
        gateway = self._require_connected()
        await self._gateway_call(
            gateway.write(self.address, characteristic.handle, bytes(data), response=response, adapter=self._adapter),
            gatt=True,
        )

    async def write_gatt_descriptor(self, descriptor: BleakGATTDescriptor, data: SizedBuffer) -> None:
        gateway = self._require_connected()
        await self._gateway_call(
            gateway.write_descriptor(
                self.address, descriptor.characteristic_handle, descriptor.handle, bytes(data), adapter=self._adapter
            ),
            gatt=True,
        )

    async def start_notify(
        self, characteristic: BleakGATTCharacteristic, callback: NotifyCallback, **kwargs: Any
    ) -> None:
        gateway = self._require_connected()
        stream = await self._gateway_call(self._notification_stream(gateway, characteristic).open(), start_notify=True)
        previous = self._notifications.pop(characteristic.handle, None)
        if previous is not None:
            previous.cancel()
        self._notifications[characteristic.handle] = asyncio.create_task(
            self._forward(gateway, characteristic, stream, callback)
        )

    async def stop_notify(self, characteristic: BleakGATTCharacteristic) -> None:
        self._require_connected()
        task = self._notifications.pop(characteristic.handle, None)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    # The link

    async def _follow_link(self, watch: EventStream[GatewayEvent]) -> None:
        """Waits for the link to end, then reports it."""
        gateway = self._gateway
        fleet = gateway if isinstance(gateway, Fleet) else None
        holder = fleet.holder(self.address) if fleet is not None else None
        link_seen = False
        try:
            async for event in watch:
                if fleet is not None and holder is not None:
                    # Through a fleet, only the link of the gateway that
                    # has the device counts (others may connect it too, or
                    # have), and its events come over the broker, where
                    # one of the link before may still be on its way.
                    if event.data.get("gateway") != holder:
                        continue
                    if event.type in LINK_UP_EVENTS:
                        link_seen = True
                        continue
                    if event.type in LINK_EVENTS and not link_seen:
                        await self._after_late_events()
                        await self._check_fleet_link(fleet)
                        continue
                if event.type in LINK_EVENTS:
                    logger.debug("%s: %s (%s)", self.address, event.type, event.reason)
                    break
        except _LinkLost:
            logger.debug("%s: disconnected while the gateway was away", self.address)
        except GatewayError as error:
            logger.warning("%s: lost the gateway, so the link: %s", self.address, error)
        finally:
            await watch.aclose()
        # The gateway's HTTP client stays for disconnect(), which closes it
        # (requests may be in flight on it now).
        self._on_disconnected()

    async def _check_link(self) -> None:
        """After a break in the event stream (the gateway restarted, say), the
        link may have ended unseen: ask."""
        gateway = self._gateway
        if gateway is None:
            return
        if isinstance(gateway, Fleet):
            await self._check_fleet_link(gateway)
            return
        try:
            device = await gateway.device(self.address, adapter=self._adapter)
        except GatewayProblem as problem:
            if problem.status == 404:
                raise _LinkLost() from problem
            raise
        if not device.connected:
            raise _LinkLost()

    async def _after_late_events(self) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(max(0.0, self._connected_at + FLEET_LATE_EVENT_SECONDS - loop.time()))

    async def _check_fleet_link(self, fleet: Fleet) -> None:
        try:
            device = await fleet.fleet_device(self.address)
        except GatewayProblem as problem:
            if problem.status == 404:
                raise _LinkLost() from problem
            raise
        holder = fleet.holder(self.address)
        if not device.connected_on or (holder is not None and holder not in device.connected_on):
            raise _LinkLost()

    def _refuse_pairing_through_fleet(self) -> None:
        if self._config.fleet:
            raise BleakError(
                "pairing is not carried by the fleet: pair through the gateway that has the device "
                "(its id is in GET /v1/fleet/devices/{address})"
            )

    def _on_disconnected(self) -> None:
        """Marks the link gone and calls the disconnected callback, once per link."""
        if not self._connected:
            return
        self._connected = False
        self.services = None
        current_task = asyncio.current_task()
        for task in self._notifications.values():
            if task is not current_task:
                task.cancel()
        self._notifications.clear()
        if self._disconnected_callback is not None:
            self._disconnected_callback()

    async def _close(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None and watch is not asyncio.current_task():
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)
        gateway, self._gateway = self._gateway, None
        if gateway is not None:
            await gateway.aclose()

    # Notifications

    def _notification_stream(
        self, gateway: Gateway, characteristic: BleakGATTCharacteristic
    ) -> EventStream[bytearray | SubscriptionStatus]:
        # As much room as the gateway allows (it caps the request): a script
        # descheduled for a moment loses nothing, as with Bleak on BlueZ,
        # where dbus-daemon queues for it.
        return gateway.notification_values(
            self.address, characteristic.handle, adapter=self._adapter, buffer_kib=NOTIFICATION_BUFFER_KIB
        )

    async def _forward(
        self,
        gateway: Gateway,
        characteristic: BleakGATTCharacteristic,
        stream: EventStream[bytearray | SubscriptionStatus],
        callback: NotifyCallback,
    ) -> None:
        """Hands each value to `callback`, opening the stream again after a
        break for as long as the link lasts."""
        try:
            while self._connected:
                ended: str | None = None  # the reason the gateway gave, if it gave one
                try:
                    while batch := await stream.take():
                        for event in batch:
                            if type(event) is bytearray:
                                callback(event)
                            elif isinstance(event, SubscriptionStatus) and event.event == "subscription-ended":
                                ended = event.reason
                except GatewayUnreachable as error:
                    logger.info("%s: notifications of %d broke: %s", self.address, characteristic.handle, error)
                await stream.aclose()
                if ended is not None and ended not in _REOPEN_AFTER:
                    return
                if ended is None:
                    # The connection broke, or the gateway dropped a stream
                    # read too slowly for its rate: values may be lost.
                    logger.warning(
                        "%s: notifications of %d interrupted; subscribing again", self.address, characteristic.handle
                    )
                reopened = await self._reopen(gateway, characteristic)
                if reopened is None:
                    return
                stream = reopened
        finally:
            await stream.aclose()

    async def _reopen(
        self, gateway: Gateway, characteristic: BleakGATTCharacteristic
    ) -> EventStream[bytearray | SubscriptionStatus] | None:
        """The stream opened again, or None once the link is gone."""
        while True:
            await asyncio.sleep(NOTIFY_RETRY_SECONDS)
            if not self._connected:
                return None
            stream = self._notification_stream(gateway, characteristic)
            try:
                return await stream.open()
            except GatewayUnreachable:
                continue  # the link watch gives up on the gateway, not this
            except GatewayProblem as problem:
                if problem.status != 503:
                    logger.warning("%s: notifications of %d end: %s", self.address, characteristic.handle, problem)
                    return None

    # Pairing

    async def _pair(self, gateway: Gateway, timeout: float) -> Device:
        """Pairs (connecting first if need be), answering the agent's questions
        about this device while the pairing runs."""
        try:
            await gateway.update_device(self.address, trusted=True, adapter=self._adapter)
        except GatewayProblem as problem:
            if problem.status != 404:  # not known yet: the pairing looks for it
                raise bleak_error(problem) from problem
        except GatewayError as error:
            raise bleak_error(error) from error
        questions = gateway.events(types=["pairing-request"], device=self.address)
        await self._gateway_call(questions.open())
        answering = asyncio.create_task(self._answer(gateway, questions))
        try:
            return await self._reaching(gateway, gateway.pair(self.address, adapter=self._adapter, timeout=timeout))
        finally:
            answering.cancel()
            await asyncio.gather(answering, return_exceptions=True)
            await questions.aclose()

    async def _answer(self, gateway: Gateway, questions: EventStream[GatewayEvent]) -> None:
        async for event in questions:
            request = PairingRequest.from_json(event.data)
            answer = await self._ask(request)
            if request.kind.startswith("display-"):
                continue
            try:
                if request.kind == "passkey" and answer is not None and not isinstance(answer, bool):
                    await gateway.answer_pairing_request(request.id, passkey=int(answer))
                elif request.kind == "pin-code" and isinstance(answer, (str, int)) and not isinstance(answer, bool):
                    await gateway.answer_pairing_request(request.id, pin=str(answer))
                else:
                    await gateway.answer_pairing_request(request.id, confirm=bool(answer))
            except GatewayProblem as problem:
                logger.warning("pairing request %s could not be answered: %s", request.id, problem)

    async def _ask(self, request: PairingRequest) -> Any:
        callback = self._config.pairing
        if callback is None:
            if not request.kind.startswith("display-"):
                logger.warning(
                    "%s asks for %s to pair; refused, as no pairing callback was given to blegateway.bleak.use()",
                    request.address,
                    request.kind,
                )
            return None
        answer = callback(request)
        if inspect.isawaitable(answer):
            answer = await answer
        return answer

    # Plumbing

    def _require_connected(self) -> Gateway:
        if not self._connected or self._gateway is None:
            raise BleakError("Not connected")
        return self._gateway

    def _session(self) -> _Session:
        """The connected client's gateway, or one for this call only."""
        return _Session(self._gateway, self._config.gateway)

    async def _gateway_call(
        self,
        call: Awaitable[T],
        *,
        gatt: bool = False,
        start_notify: bool = False,
        device_op: bool = False,
    ) -> T:
        """Awaits `call`, raising what goes wrong as Bleak's BlueZ backend would;
        `device_op`: a 404 means the device is unknown."""
        try:
            return await call
        except GatewayProblem as problem:
            if device_op and problem.status == 404:
                raise self._not_found() from problem
            raise bleak_error(problem, gatt=gatt, start_notify=start_notify) from problem
        except GatewayError as error:
            raise bleak_error(error) from error

    async def _reaching(self, gateway: Gateway, call: Awaitable[Device]) -> Device:
        """Connects or pairs. A device the gateway did not hear in time and
        does not know is `BleakDeviceNotFoundError`, as Bleak's BlueZ backend
        raises when its scan for the address finds nothing."""
        try:
            return await call
        except GatewayProblem as problem:
            if problem.status in (404, 504) and not await self._known(gateway):
                raise self._not_found() from problem
            raise bleak_error(problem) from problem
        except GatewayError as error:
            raise bleak_error(error) from error

    async def _known(self, gateway: Gateway) -> bool:
        try:
            if isinstance(gateway, Fleet):
                await gateway.fleet_device(self.address)
            else:
                await gateway.device(self.address, adapter=self._adapter)
        except GatewayProblem as problem:
            return problem.status != 404
        except GatewayError:
            pass
        return True

    def _not_found(self) -> BleakDeviceNotFoundError:
        return BleakDeviceNotFoundError(self.address, f"Device with address {self.address} was not found.")

    def _collection(self, services: list[Service]) -> BleakGATTServiceCollection:
        """The services as Bleak's BlueZ backend builds them: handles, flags,
        descriptors, and the write-without-response size from each
        characteristic's MTU."""
        collection = BleakGATTServiceCollection()
        for found in services:
            if self._requested_services is not None and found.uuid not in self._requested_services:
                continue
            service = BleakGATTService(found, found.handle, found.uuid)
            collection.add_service(service)
            for char in found.characteristics:
                characteristic = BleakGATTCharacteristic(
                    char,
                    char.handle,
                    char.uuid,
                    list(char.flags),  # type: ignore[arg-type]
                    functools.partial(_write_without_response_size, char),
                    service,
                )
                collection.add_characteristic(characteristic)
                for descriptor in char.descriptors:
                    collection.add_descriptor(
                        BleakGATTDescriptor(descriptor, descriptor.handle, descriptor.uuid, characteristic)
                    )
        return collection


def _write_without_response_size(characteristic: Characteristic) -> int:
    # What Bleak's BlueZ backend reads from the MTU property (23 before BlueZ 5.62).
    return (characteristic.mtu or 23) - 3


class _Session:
    def __init__(self, gateway: Gateway | None, make: Callable[[], Gateway]) -> None:
        self._shared = gateway
        self._make = make
        self._own: Gateway | None = None

    async def __aenter__(self) -> Gateway:
        if self._shared is not None:
            return self._shared
        self._own = self._make()
        return self._own

    async def __aexit__(self, *exc_info: object) -> None:
        if self._own is not None:
            await self._own.aclose()
