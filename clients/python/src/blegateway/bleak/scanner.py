"""`GatewayBleakScanner`: Bleak's scanner backend over a gateway's scan stream."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

from bleak.backends.device import BLEDevice
from bleak.backends.scanner import AdvertisementData, AdvertisementDataCallback, BaseBleakScanner
from bleak.exc import BleakError

from ..fleet import Fleet
from ..gateway import Gateway
from ..models import Device, FleetDevice, GatewayEvent, ScanEvent
from ..problem import GatewayError, GatewayUnreachable
from ..stream import EventStream
from .config import current
from .errors import BleakGatewayError, bleak_error

logger = logging.getLogger(__name__)


def advertisement_data(device: Device) -> AdvertisementData:
    """The advertisement data as Bleak's BlueZ backend fills it from Device1's properties."""
    return AdvertisementData(
        local_name=device.name,
        manufacturer_data=dict(device.manufacturer_data),
        service_data=dict(device.service_data),
        service_uuids=list(device.service_uuids),
        tx_power=device.tx_power,
        # BlueZ leaves RSSI out when it has none; Bleak then says -127.
        rssi=device.rssi if device.rssi is not None and device.rssi != 127 else -127,
        platform_data=(device.address, device),
    )


def pattern_text(pattern: Any) -> str:
    """A Bleak or-pattern (`OrPattern` or a `(start, ad_type, content)`
    tuple) as the gateway's `pattern` parameter: `start:type:hex`."""
    start, ad_type, content = pattern
    return f"{int(start)}:{int(ad_type):02x}:{bytes(content).hex()}"


def display_name(device: Device) -> str | None:
    """The name Bleak's BlueZ backend gives a BLEDevice: BlueZ's Alias,
    except the one BlueZ makes up from the address when it has no name."""
    if device.alias is None or device.alias == device.address.replace(":", "-"):
        return None
    return device.alias


def fleet_advertisement_data(device: FleetDevice) -> AdvertisementData:
    """What the fleet's merged view tells of a device: its address and the
    strongest signal a gateway hears it with, nothing of its advertisement
    (the gateways publish only their RSSI on the broker's presence topics)."""
    rssi = max((hearing.rssi for hearing in device.heard_by), default=-127)
    return AdvertisementData(
        local_name=None,
        manufacturer_data={},
        service_data={},
        service_uuids=[],
        tx_power=None,
        rssi=rssi,
        platform_data=(device.address, device),
    )


def ble_device(device: Device) -> BLEDevice:
    return BLEDevice(device.address, display_name(device), device)


class GatewayBleakScanner(BaseBleakScanner):
    """Scans through a gateway (`GET /v1/scan`, every advertisement).

    For `BleakScanner(backend=GatewayBleakScanner)`; the gateway is the one
    `blegateway.bleak.use()` named, or `BLEGATEWAY_URL`, or
    `gateway="http://..."` among the scanner's keyword arguments.
    `bluez={"adapter": "hci1"}` picks the gateway's adapter, and the
    discovery filters `RSSI` and `DuplicateData` are honoured.

    `scanning_mode="passive"` needs `bluez={"or_patterns": [...]}`, as
    Bleak's BlueZ backend does, and asks the gateway for a passive scan
    (`mode=passive`, one `pattern` per or-pattern): an advertisement monitor
    where the gateway's bluetoothd runs with -E. Without one the gateway
    answers 403 and `start()` raises a `BleakError` saying so.

    If the stream breaks (the gateway restarts), the scan is opened again
    until `stop()`; `stop()` raises the error if the scan is down then.

    Through a fleet (`use(url, fleet=True)`, BLEGATEWAY_FLEET=1 or
    `fleet=True` here) it scans nothing itself: it reports every device the
    fleet's gateways hear. First each device of `GET /v1/fleet/devices`
    (address and strongest RSSI only: the merged view has no advertisement
    data), then each `device-discovered` / `device-updated` of
    `GET /v1/fleet/events`, which carries the advertisement as the gateway
    that heard it saw it (at most once a second per device and gateway).
    The gateways publish what they hear while they scan, or always with
    `serve --mqtt-presence passive`. Passive mode and the `RSSI` filter are
    not applied to the fleet.
    """

    def __init__(
        self,
        detection_callback: AdvertisementDataCallback | None,
        service_uuids: list[str] | None,
        scanning_mode: Literal["active", "passive"] = "active",
        *,
        bluez: dict[str, Any] | None = None,
        gateway: str | None = None,
        api_key: str | None = None,
        fleet: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(detection_callback, service_uuids)
        self._config = current(gateway, api_key, fleet)
        bluez = bluez or {}
        self._patterns: list[str] = []
        if scanning_mode == "passive":
            or_patterns = bluez.get("or_patterns")
            if not or_patterns:
                raise BleakError("passive scanning mode requires bluez or_patterns")
            if service_uuids:
                logger.warning(
                    "service uuid filtering is not implemented for passive scanning, "
                    "use bluez or_patterns as a workaround"
                )
            self._patterns = [pattern_text(pattern) for pattern in or_patterns]
        self._adapter: str | None = bluez.get("adapter")
        filters: dict[str, Any] = dict(bluez.get("filters") or {})
        self._filters: dict[str, Any] = {"duplicates": True}
        if "RSSI" in filters:
            self._filters["rssi"] = int(filters.pop("RSSI"))
        if "DuplicateData" in filters:
            self._filters["duplicates"] = bool(filters.pop("DuplicateData"))
        uuids = filters.pop("UUIDs", None)
        filters.pop("Transport", None)
        for name in filters:
            logger.warning("Filter '%s' is not currently supported.", name)
        self._uuids: list[str] = list(uuids if uuids is not None else self._service_uuids or [])
        if self._patterns:
            # As in Bleak's BlueZ backend, a passive scan does not filter by service.
            self._uuids = []
            self._filters["mode"] = "passive"
            self._filters["pattern"] = self._patterns
        self._gateway: Gateway | None = None
        self._stream: EventStream[ScanEvent] | EventStream[GatewayEvent] | None = None
        self._task: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None

    async def start(self) -> None:
        if self._task is not None:
            raise BleakError("Scanner is already running")
        self.seen_devices = {}
        self._failure = None
        self._gateway = self._config.gateway()
        try:
            if isinstance(self._gateway, Fleet):
                self._stream = await self._open_fleet(self._gateway)
            else:
                self._stream = await self._open()
        except BaseException:
            await self._gateway.aclose()
            self._gateway = None
            raise
        if isinstance(self._gateway, Fleet):
            self._task = asyncio.create_task(self._read_fleet())
        else:
            self._task = asyncio.create_task(self._read())

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self._stream is not None:
            await self._stream.aclose()
            self._stream = None
        if self._gateway is not None:
            await self._gateway.aclose()
            self._gateway = None
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure

    async def _open(self) -> EventStream[ScanEvent]:
        assert self._gateway is not None
        stream = self._gateway.scan_stream(services=self._uuids, adapter=self._adapter, **self._filters)
        try:
            return await stream.open()
        except GatewayError as error:
            raise bleak_error(error) from error

    async def _open_fleet(self, fleet: Fleet) -> EventStream[GatewayEvent]:
        stream = fleet.events()
        try:
            await stream.open()
        except GatewayError as error:
            raise bleak_error(error) from error
        return stream

    async def _read_fleet(self) -> None:
        """What the fleet hears already, then its advertisements as they
        come. The event stream is open before the merged view is read, so
        nothing heard between the two is missed; both are reported once
        `start()` has returned, when Bleak's own callbacks are in place
        (`advertisement_data()` adds one only then). The stream resumes by
        itself after a break (`Last-Event-ID`); a failure to is kept for
        `stop()`."""
        stream = self._stream
        fleet = self._gateway
        assert isinstance(stream, EventStream) and isinstance(fleet, Fleet)
        try:
            for device in await fleet.fleet_devices():
                if device.heard_by:
                    self._report(device.address, None, device, fleet_advertisement_data(device))
            async for event in stream:
                if isinstance(event, GatewayEvent):
                    self._handle_fleet(event)
        except GatewayError as error:
            self._failure = BleakGatewayError(error)
            logger.warning("the fleet's event stream broke: %s", error)

    def _handle_fleet(self, event: GatewayEvent) -> None:
        device = event.device
        if device is None:
            if event.type == "device-lost" and event.reason == "removed" and event.address is not None:
                self.seen_devices.pop(event.address, None)
            return
        if event.type in ("device-discovered", "device-updated"):
            self._report(device.address, display_name(device), device, advertisement_data(device))

    def _report(self, address: str, name: str | None, details: Any, advertisement: AdvertisementData) -> None:
        if not self.is_allowed_uuid(advertisement.service_uuids):
            return
        found = self.create_or_update_device(address, address, name, details, advertisement)
        self.call_detection_callbacks(found, advertisement)

    async def _read(self) -> None:
        while True:
            assert self._stream is not None
            try:
                async for event in self._stream:
                    assert isinstance(event, ScanEvent)
                    self._handle(event)
            except GatewayUnreachable as error:
                self._failure = BleakGatewayError(error)
                logger.warning("scan stream broke (%s); opening it again", error)
            await self._stream.aclose()
            await asyncio.sleep(1.0)
            try:
                self._stream = await self._open()
                self._failure = None
            except (BleakError, TimeoutError) as error:
                self._failure = error
                logger.warning("scan through %s could not be opened again: %s", self._config.url, error)

    def _handle(self, event: ScanEvent) -> None:
        device = event.device
        if device is None:
            if event.event == "scan-stopped":
                logger.warning("the gateway stopped the scan (%s)", event.reason)
            return
        if event.event == "lost":
            if event.reason == "removed":
                self.seen_devices.pop(device.address, None)
            return
        self._report(device.address, display_name(device), device, advertisement_data(device))
