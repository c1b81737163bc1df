"""The benchmark's peer: a small BLE-to-HTTP gateway on Bleak and aiohttp.

What a Python user would write instead of blegateway, kept small and
reasonable, so that `make bench` can set every figure beside it:

  GET /health                          200 once BlueZ's objects are read and
                                       an adapter is there, else 503
  GET /read?device=ADDR&char=UUID      reads the characteristic (ReadValue):
                                       {"device", "characteristic", "value"
                                       (hex), "encoding"}
  GET /notify?device=ADDR&char=UUID    a Server-Sent-Events stream of the
                                       characteristic's notifications

One BleakClient per device, connected on first use (to a device bluetoothd
already has connected, through BleakAdapter.get_connected_devices, or else
found by a scan). Notifications: StartNotify once per characteristic while
any stream of it is open, each value encoded once into an SSE frame and
queued to every stream; a stream whose queue overflows is ended (a slow
reader must not hold the others' memory); a comment heartbeat every 15 s.

It talks to whatever serves org.bluez on the system bus; the benchmark points
DBUS_SYSTEM_BUS_ADDRESS at its private bus.

  python peer.py --listen 127.0.0.1:8090 [--log-level warning]
"""

import argparse
import asyncio
import itertools
import json
import logging
import resource
import signal

from aiohttp import web
from bleak import BleakAdapter, BleakClient, BleakScanner
from bleak.backends.bluezdbus.manager import get_global_bluez_manager
from bleak.backends.characteristic import BleakGATTCharacteristic
from bleak.exc import BleakError
from bleak.uuids import normalize_uuid_str

log = logging.getLogger("peer")

HEARTBEAT_SECONDS = 15
QUEUE_LIMIT = 4096
"""Frames a stream may have waiting before it is ended as too slow."""


class Devices:
    """One connected BleakClient per device address, made on first use."""

    def __init__(self) -> None:
        self._clients: dict[str, BleakClient] = {}
        self._pending: dict[str, asyncio.Task[BleakClient]] = {}

    async def client(self, address: str) -> BleakClient:
        address = address.upper()
        client = self._clients.get(address)
        if client is not None and client.is_connected:
            return client
        task = self._pending.get(address)
        if task is None:
            task = asyncio.create_task(self._connect(address))
            self._pending[address] = task
            task.add_done_callback(lambda _: self._pending.pop(address, None))
        return await task

    async def _connect(self, address: str) -> BleakClient:
        adapter = await BleakAdapter.get()
        connected = await adapter.get_connected_devices(service_uuids=await self._known_service_uuids())
        device = next((d for d in connected if d.address.upper() == address), None)
        if device is None:
            device = await BleakScanner.find_device_by_address(address, timeout=10)
        if device is None:
            raise web.HTTPNotFound(text=f"no device {address}")
        client = BleakClient(device)
        await client.connect()
        self._clients[address] = client
        return client

    @staticmethod
    async def _known_service_uuids() -> list[str]:
        # get_connected_devices matches devices by the services they list;
        # every service BlueZ knows of is the widest such filter.
        manager = await get_global_bluez_manager()
        uuids = set()
        for interfaces in manager._properties.values():
            uuids.update(interfaces.get("org.bluez.Device1", {}).get("UUIDs", []))
        return sorted(uuids) or ["1801"]


class Subscription:
    """StartNotify on one characteristic while it has streams; fans out."""

    def __init__(self, hub: "Notifications", key: tuple[str, str]) -> None:
        self.hub = hub
        self.key = key
        self.queues: set[asyncio.Queue[bytes | None]] = set()
        self.client: BleakClient | None = None
        self.characteristic: BleakGATTCharacteristic | None = None

    def on_value(self, _characteristic, data: bytearray) -> None:
        payload = json.dumps(
            {"device": self.key[0], "characteristic": self.key[1], "value": data.hex(), "encoding": "hex"},
            separators=(",", ":"),
        )
        frame = f"id: {next(self.hub.ids)}\nevent: notification\ndata: {payload}\n\n".encode()
        for queue in list(self.queues):
            if queue.qsize() >= QUEUE_LIMIT:
                self.queues.discard(queue)
                queue.put_nowait(None)
            else:
                queue.put_nowait(frame)

    async def start(self, devices: Devices) -> None:
        self.client = await devices.client(self.key[0])
        self.characteristic = self.client.services.get_characteristic(self.key[1])
        if self.characteristic is None:
            raise web.HTTPNotFound(text=f"no characteristic {self.key[1]}")
        await self.client.start_notify(self.characteristic, self.on_value)

    async def stop(self) -> None:
        if self.client is not None and self.client.is_connected and self.characteristic is not None:
            try:
                await self.client.stop_notify(self.characteristic)
            except (BleakError, OSError) as error:
                log.debug("stop_notify: %s", error)


class Notifications:
    """The subscriptions, shared by every stream of a characteristic."""

    def __init__(self, devices: Devices) -> None:
        self.devices = devices
        self.subscriptions: dict[tuple[str, str], Subscription] = {}
        self.ids = itertools.count(1)
        self._lock = asyncio.Lock()

    async def join(self, key: tuple[str, str]) -> tuple[Subscription, asyncio.Queue[bytes | None]]:
        async with self._lock:
            subscription = self.subscriptions.get(key)
            if subscription is None:
                subscription = Subscription(self, key)
                await subscription.start(self.devices)
                self.subscriptions[key] = subscription
            queue: asyncio.Queue[bytes | None] = asyncio.Queue()
            subscription.queues.add(queue)
            return subscription, queue

    async def leave(self, subscription: Subscription, queue: asyncio.Queue[bytes | None]) -> None:
        async with self._lock:
            subscription.queues.discard(queue)
            if not subscription.queues and self.subscriptions.get(subscription.key) is subscription:
                del self.subscriptions[subscription.key]
                await subscription.stop()


def target(request: web.Request) -> tuple[str, str]:
    device = request.query.get("device")
    char = request.query.get("char")
    if not device or not char:
        raise web.HTTPBadRequest(text="device and char are required")
    try:
        return device.upper(), normalize_uuid_str(char)
    except ValueError:
        raise web.HTTPBadRequest(text=f"bad characteristic UUID {char}") from None


async def health(request: web.Request) -> web.Response:
    try:
        manager = await get_global_bluez_manager()
        manager.get_default_adapter()
    except (BleakError, OSError) as error:
        return web.json_response({"status": "unavailable", "detail": str(error)}, status=503)
    return web.json_response({"status": "ok"})


async def read(request: web.Request) -> web.Response:
    device, char = target(request)
    client = await request.app["devices"].client(device)
    characteristic = client.services.get_characteristic(char)
    if characteristic is None:
        raise web.HTTPNotFound(text=f"no characteristic {char}")
    try:
        value = await client.read_gatt_char(characteristic)
    except BleakError as error:
        raise web.HTTPBadGateway(text=str(error)) from None
    return web.json_response({"device": device, "characteristic": char, "value": value.hex(), "encoding": "hex"})


async def notify(request: web.Request) -> web.StreamResponse:
    key = target(request)
    hub: Notifications = request.app["notifications"]
    subscription, queue = await hub.join(key)
    try:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        await response.write(b": subscribed\n\n")
        while True:
            try:
                frame = await asyncio.wait_for(queue.get(), HEARTBEAT_SECONDS)
            except asyncio.TimeoutError:
                await response.write(b": heartbeat\n\n")
                continue
            if frame is None:
                break
            # Whatever queued up meanwhile goes out in one write.
            frames = [frame]
            ended = False
            while not queue.empty():
                more = queue.get_nowait()
                if more is None:
                    ended = True
                    break
                frames.append(more)
            await response.write(b"".join(frames))
            if ended:
                break
        return response
    finally:
        await hub.leave(subscription, queue)


def make_app() -> web.Application:
    app = web.Application()
    devices = Devices()
    app["devices"] = devices
    app["notifications"] = Notifications(devices)
    app.router.add_get("/health", health)
    app.router.add_get("/read", read)
    app.router.add_get("/notify", notify)

    return app


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--listen", default="127.0.0.1:8090", help="HOST:PORT (default 127.0.0.1:8090)")
    parser.add_argument("--log-level", default="warning")
    arguments = parser.parse_args()
    logging.basicConfig(level=arguments.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    host, _, port = arguments.listen.rpartition(":")
    # A stream is a socket: allow as many as the hard limit lets.
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    # BlueZ's objects first, as a user's gateway would, so that /health's
    # first 200 means the gateway can serve Bluetooth.
    await get_global_bluez_manager()
    # Open streams are ended at once when the peer stops (they would keep
    # a graceful shutdown waiting); devices stay connected, as bluetoothd
    # keeps them, and their notify sessions end with the peer's bus
    # connections.
    runner = web.AppRunner(make_app(), access_log=None, handler_cancellation=True, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, host or "127.0.0.1", int(port), backlog=4096)
    await site.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    await stop.wait()
    await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
