"""EventStream on its own: what the gateway's bytes become (no gateway:
httpx's MockTransport answers as a gateway would, or would not)."""

from __future__ import annotations

import httpx
import pytest

from blegateway import EventStream, GatewayError, GatewayProblem, StreamEvent


def stream(body: bytes, status: int = 200, content_type: str = "text/event-stream") -> EventStream[StreamEvent]:
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.headers["Last-Event-ID"] == "41"
        return httpx.Response(status, headers={"Content-Type": content_type}, content=body)

    client = httpx.AsyncClient(base_url="http://gateway.test", transport=httpx.MockTransport(answer))
    return EventStream(
        client,
        "http://gateway.test",
        "/v1/events",
        [],
        lambda e: e,
        resumable=False,
        last_event_id=41,
        read_timeout=5,
        reconnect_timeout=1,
    )


async def test_events_with_ids_and_json_data() -> None:
    body = (
        b": heartbeat\n\n"
        b'id: 42\nevent: device-connected\ndata: {"address":"C4:7C:8D:6A:3E:01"}\n\n'
        b"event: replay-gap\ndata: {}\n\n"
    )
    async with stream(body) as events:
        read = [event async for event in events]
    assert read == [
        StreamEvent("device-connected", 42, {"address": "C4:7C:8D:6A:3E:01"}),
        StreamEvent("replay-gap", None, {}),
    ]
    assert events.last_event_id == 42


async def test_data_that_is_not_json_is_a_clear_error() -> None:
    async with stream(b"id: 42\nevent: notification\ndata: {not json\n\n") as events:
        with pytest.raises(GatewayError, match="'notification' event whose data is not JSON"):
            await anext(events)


async def test_a_problem_instead_of_a_stream() -> None:
    problem = b'{"type":"urn:blegateway:problem:not-connected","title":"t","status":409,"detail":"not connected"}'
    with pytest.raises(GatewayProblem) as raised:
        await stream(problem, 409, "application/problem+json").open()
    assert (raised.value.status, raised.value.name, raised.value.detail) == (409, "not-connected", "not connected")
