"""`Gateway`, the asyncio client, against the real gateway on bluez-sim."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from blegateway import Gateway, GatewayEvent, GatewayProblem, Notification, ScanEvent, SubscriptionStatus
from rig import Rig

HEART_RATE = "C4:7C:8D:6A:3E:01"
PLUG = "D0:73:D5:22:41:9C"
RELAY = "0000ff01-0000-1000-8000-00805f9b34fb"


@pytest.fixture
async def gateway(rig: Rig) -> AsyncIterator[Gateway]:
    async with Gateway(rig.url) as client:
        yield client


async def test_gateway_and_adapters(gateway: Gateway) -> None:
    info = await gateway.info()
    assert info.name == "blegateway" and info.bluez_available
    adapters = await gateway.adapters()
    assert [a.name for a in adapters] == ["hci0"]
    assert adapters[0].address == "00:1A:7D:DA:71:13" and adapters[0].powered
    assert (await gateway.adapter("hci0")).state == "powered-on"
    assert (await gateway.health())["status"] == "ok"


async def test_timed_scan_and_scan_stream(gateway: Gateway) -> None:
    result = await gateway.scan(1.0, services=["180d"])
    strap = next(d for d in result.devices if d.address == HEART_RATE)
    assert strap.name == "Polar H10 6A3E01"
    assert strap.manufacturer_data == {0x006B: bytes.fromhex("3f00")}
    assert strap.tx_power == 4

    seen: list[ScanEvent] = []
    async with gateway.scan_stream(service_data=["fcd2"], duplicates=True) as stream:
        async for event in stream:
            seen.append(event)
            if len(seen) == 2:
                break
    assert {e.event for e in seen} <= {"discovered", "updated"}
    sensor = seen[0].device
    assert sensor is not None and sensor.address == "A4:C1:38:8E:2F:55"
    assert sensor.service_data["0000fcd2-0000-1000-8000-00805f9b34fb"] == bytes.fromhex("40016102c40903bf13")
    assert any(d["format"] == "bthome" for d in sensor.decoded)


async def test_connect_gatt_and_problems(gateway: Gateway) -> None:
    device = await gateway.connect(HEART_RATE, timeout=20)
    try:
        assert device.connected and device.services_resolved and device.mtu == 517
        services = await gateway.services(HEART_RATE)
        heart_rate = next(s for s in services if s.uuid == "0000180d-0000-1000-8000-00805f9b34fb")
        measurement = heart_rate.characteristics[0]
        assert (measurement.handle, measurement.flags, measurement.name) == (13, ["notify"], "Heart Rate Measurement")
        assert measurement.descriptors[0].uuid == "00002902-0000-1000-8000-00805f9b34fb"
        assert await gateway.read(HEART_RATE, "2a38") == b"\x01"
        assert await gateway.read(HEART_RATE, 16) == b"\x01"  # by handle
        assert (await gateway.characteristic(HEART_RATE, "2a38")).handle == 16
        await gateway.write(HEART_RATE, "2a39", b"\x01")
        assert await gateway.read_descriptor(HEART_RATE, "2a37", "2902") == b"\x00\x00"

        with pytest.raises(GatewayProblem) as refused:
            await gateway.write(HEART_RATE, "2a39", b"\x02")
        problem = refused.value
        assert (problem.status, problem.name, problem.att_error) == (502, "peripheral-failed", 0x80)
        assert problem.dbus_error == "org.bluez.Error.Failed"
        assert problem.detail == "Operation failed with ATT error: 0x80"
        assert problem.instance == f"/v1/devices/{HEART_RATE}/characteristics/2a39/value"

        with pytest.raises(GatewayProblem) as unknown:
            await gateway.read(HEART_RATE, "2a99")
        assert unknown.value.status == 404
    finally:
        assert not (await gateway.disconnect(HEART_RATE)).connected
    with pytest.raises(GatewayProblem) as bad:
        await gateway.device("AA:BB")
    assert bad.value.status == 400 and bad.value.name == "invalid-request"


async def test_notification_stream_and_events_resumed_with_last_event_id(gateway: Gateway, rig: Rig) -> None:
    await gateway.connect(PLUG, timeout=20)
    try:
        values: list[bytes] = []
        async with gateway.events(types=["characteristic-value"], device=PLUG) as events:
            async with gateway.notifications(PLUG, RELAY) as stream:
                for value in (b"\x01", b"\x00", b"\x01"):
                    await gateway.write(PLUG, RELAY, value)  # the relay echoes what it is written
                async for event in stream:
                    assert isinstance(event, Notification)
                    assert (event.address, event.characteristic, event.handle) == (PLUG, RELAY, 13)
                    values.append(event.value)
                    if len(values) == 3:
                        break
            assert values == [b"\x01", b"\x00", b"\x01"]
            first = await anext(events)
            assert isinstance(first, GatewayEvent) and first.type == "characteristic-value" and first.id is not None

        # Coming back after the first one gets the two after it, and no more.
        async with gateway.events(types=["characteristic-value"], device=PLUG, last_event_id=first.id) as resumed:
            rest = [await anext(resumed), await anext(resumed)]
        assert [e.value for e in rest] == [b"\x00", b"\x01"]
        assert first.id < rest[0].id < rest[1].id  # type: ignore[operator]
    finally:
        await gateway.disconnect(PLUG)


async def test_notification_stream_ends_with_the_link(gateway: Gateway, rig: Rig) -> None:
    await gateway.connect(PLUG, timeout=20)
    async with gateway.notifications(PLUG, RELAY) as stream:
        await rig.control("DropConnection", "s", PLUG)
        last = [event async for event in stream]
    assert last and isinstance(last[-1], SubscriptionStatus)
    assert (last[-1].event, last[-1].reason) == ("subscription-ended", "disconnected")


async def test_keep_and_standing_subscriptions(gateway: Gateway) -> None:
    kept = await gateway.keep(HEART_RATE, max_attempts=3)
    try:
        assert (kept.address, kept.max_attempts) == (HEART_RATE, 3)
        assert HEART_RATE in [k.address for k in await gateway.kept_connections()]
        subscription = await gateway.subscribe(HEART_RATE, "2a37")
        try:
            assert subscription.mode == "notify"
            assert subscription.id in [s.id for s in await gateway.subscriptions()]
            for _ in range(200):
                if (await gateway.subscription(subscription.id)).status == "active":
                    break
                await asyncio.sleep(0.1)
            assert (await gateway.kept(HEART_RATE)).status == "connected"
            assert (await gateway.subscription(subscription.id)).status == "active"
        finally:
            await gateway.unsubscribe(subscription.id)
        with pytest.raises(GatewayProblem):
            await gateway.subscription(subscription.id)
    finally:
        await gateway.release(HEART_RATE)
        await gateway.disconnect(HEART_RATE)
    assert HEART_RATE not in [k.address for k in await gateway.kept_connections()]


async def test_peripheral_role(gateway: Gateway) -> None:
    application = await gateway.publish_application(
        {
            "services": [
                {"uuid": "180d", "characteristics": [{"uuid": "2a37", "flags": ["read", "notify"], "value": "0048"}]}
            ]
        }
    )
    try:
        assert application.registered and application.services[0]["uuid"].startswith("0000180d")
        assert await gateway.local_value(application.id, "2a37") == b"\x00\x48"
        assert await gateway.set_local_value(application.id, "2a37", b"\x00\x50") is False  # nobody subscribed
        assert await gateway.local_value(application.id, "2a37") == b"\x00\x50"
        advertisement = await gateway.advertise({"local_name": "thermo", "service_uuids": ["180d"]})
        try:
            assert advertisement.registered
            assert advertisement.id in [a.id for a in await gateway.advertisements()]
        finally:
            await gateway.stop_advertisement(advertisement.id)
    finally:
        await gateway.unpublish_application(application.id)
    assert application.id not in [a.id for a in await gateway.applications()]
