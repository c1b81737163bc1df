"""EventStream on its own: what the gateway's bytes become (no gateway: a
socket on 127.0.0.1 answers as a gateway would, or would not)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest

from blegateway import EventStream, GatewayError, GatewayProblem, GatewayUnreachable, StreamEvent


@asynccontextmanager
async def stream(
    body: bytes,
    status: int = 200,
    content_type: str = "text/event-stream",
    *,
    chunked: bool = False,
    silent_for: float = 0,
) -> AsyncIterator[EventStream[StreamEvent]]:
    """An EventStream on a server that answers one request with `body`
    (in HTTP/1.1 chunks of a few bytes each if `chunked`), says nothing for
    `silent_for` seconds, then ends the body."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        assert b"\r\nLast-Event-ID: 41\r\n" in head
        framing = b"Transfer-Encoding: chunked" if chunked else b"Connection: close"
        writer.write(b"HTTP/1.1 %d X\r\nContent-Type: %s\r\n%s\r\n\r\n" % (status, content_type.encode(), framing))
        if chunked:
            for start in range(0, len(body), 7):
                piece = body[start : start + 7]
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
            await asyncio.sleep(silent_for)
            writer.write(b"0\r\n\r\n")
        else:
            writer.write(body)
            await writer.drain()
            await asyncio.sleep(silent_for)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    async with server, httpx.AsyncClient(base_url=url) as client:
        yield EventStream(
            client,
            url,
            "/v1/events",
            [],
            lambda e: e,
            resumable=False,
            last_event_id=41,
            read_timeout=1,
            reconnect_timeout=1,
        )


async def test_events_with_ids_and_json_data() -> None:
    body = (
        b": heartbeat\n\n"
        b'id: 42\nevent: device-connected\ndata: {"address":"C4:7C:8D:6A:3E:01"}\n\n'
        b"event: replay-gap\ndata: {}\n\n"
    )
    async with stream(body) as opened, opened as events:
        read = [event async for event in events]
    assert read == [
        StreamEvent("device-connected", 42, {"address": "C4:7C:8D:6A:3E:01"}),
        StreamEvent("replay-gap", None, {}),
    ]
    assert events.last_event_id == 42


async def test_data_that_is_not_json_is_a_clear_error() -> None:
    async with stream(b"id: 42\nevent: notification\ndata: {not json\n\n") as opened, opened as events:
        with pytest.raises(GatewayError, match="'notification' event whose data is not JSON"):
            await anext(events)


async def test_a_problem_instead_of_a_stream() -> None:
    problem = b'{"type":"urn:blegateway:problem:not-connected","title":"t","status":409,"detail":"not connected"}'
    async with stream(problem, 409, "application/problem+json") as unopened:
        with pytest.raises(GatewayProblem) as raised:
            await unopened.open()
    assert (raised.value.status, raised.value.name, raised.value.detail) == (409, "not-connected", "not connected")


async def test_events_split_across_chunks_and_lines_ended_by_cr_lf() -> None:
    body = (
        b'id: 42\r\nevent: notification\r\ndata: {"value":"0e77"}\r\n\r\n'
        b": heartbeat\n\n"
        b'id: 43\revent: notification\rdata: {"value":\r\ndata: "0e78"}\r\r'
    )
    async with stream(body, chunked=True) as opened, opened as events:
        read = [event async for event in events]
    assert read == [
        StreamEvent("notification", 42, {"value": "0e77"}),
        StreamEvent("notification", 43, {"value": "0e78"}),
    ]


async def test_an_answer_that_is_not_an_event_stream_is_a_clear_error() -> None:
    async with stream(b"<html></html>", 200, "text/html") as unopened:
        with pytest.raises(GatewayError, match="answered text/html, not an event stream"):
            await unopened.open()


async def test_take_hands_out_what_arrived_in_batches_then_nothing_once_it_ends() -> None:
    body = b"".join(b'id: %d\nevent: notification\ndata: {"n":%d}\n\n' % (n, n) for n in range(42, 142))
    async with stream(body) as opened, opened as events:
        batches = []
        while batch := await events.take():
            batches.append(batch)
    assert [event for batch in batches for event in batch] == [
        StreamEvent("notification", n, {"n": n}) for n in range(42, 142)
    ]
    assert len(batches) < 100  # events that arrived together came together
    assert events.last_event_id == 141


async def test_a_stream_silent_for_longer_than_its_read_timeout_counts_as_broken() -> None:
    body = b'id: 42\nevent: notification\ndata: {"n":42}\n\n'
    async with stream(body, chunked=True, silent_for=3) as opened, opened as events:
        assert await events.take() == [StreamEvent("notification", 42, {"n": 42})]
        with pytest.raises(GatewayUnreachable, match="nothing received for 1 s"):
            await events.take()
