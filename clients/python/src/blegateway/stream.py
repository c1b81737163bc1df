"""A Server-Sent-Events stream of the gateway."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import httpx

from .models import StreamEvent
from .problem import GatewayError, GatewayProblem, GatewayUnreachable, problem_from_response
from .sse import RawEvent
from .stream_connection import StreamBroken, StreamConnection

T = TypeVar("T")

logger = logging.getLogger(__name__)

_json = json.JSONDecoder()

CONNECT_TIMEOUT = 10.0
"""Seconds to connect and receive the head of the answer."""

RECONNECT_DELAYS = (0.1, 0.25, 0.5, 1.0, 2.0)
"""Pauses between attempts to open a stream again (the last one repeats)."""


class EventStream(Generic[T]):
    """An open event stream: iterate it for its events (typed by `parse`).

    Made by `Gateway`'s stream methods, opened by `open()` (or `async
    with`), which returns once the gateway has answered: the scan is
    running, the subscription is made, or the problem is raised.

    A stream that can resume (`GET /v1/events`) is opened again when its
    connection breaks (the gateway restarted, the network dropped), with
    `Last-Event-ID` set to the last id it saw, so no event is lost or
    repeated; it tries for `reconnect_timeout` seconds, then raises
    `GatewayUnreachable`. Any other stream raises `GatewayUnreachable` when
    its connection breaks, and ends (StopAsyncIteration) when the gateway
    ends it. A gateway that goes silent (no heartbeat for `read_timeout`
    seconds) counts as a broken connection.

    The stream has a connection of its own (`StreamConnection`): all the
    events that arrive together are decoded in one step, and each is parsed
    when it is taken, so a fast stream costs little more than its JSON.
    """

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        path: str,
        params: list[tuple[str, str]],
        parse: Callable[[StreamEvent], T],
        *,
        resumable: bool,
        last_event_id: int | None,
        read_timeout: float,
        reconnect_timeout: float,
        on_reconnect: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._client = client
        self._url = url
        self._path = path
        self._params = params
        self._parse = parse
        self._resumable = resumable
        self.last_event_id = last_event_id
        """The id of the last event read (or the one to resume after)."""
        self._read_timeout = read_timeout
        self._reconnect_timeout = reconnect_timeout
        self._on_reconnect = on_reconnect
        self._connection: StreamConnection | None = None
        self._decoded: deque[RawEvent] = deque()
        """Events decoded from the last chunks and not yet taken."""
        self._closed = False

    async def open(self) -> EventStream[T]:
        """Sends the request; raises `GatewayProblem` or `GatewayUnreachable`."""
        headers = [("Accept", "text/event-stream"), ("Cache-Control", "no-store")]
        for name in ("User-Agent", "Authorization"):
            if name in self._client.headers:
                headers.append((name, self._client.headers[name]))
        if self.last_event_id is not None:
            headers.append(("Last-Event-ID", str(self.last_event_id)))
        base = self._client.base_url
        query = str(httpx.QueryParams(tuple(self._params)))
        target = f"{self._path}?{query}" if query else self._path
        url = base.copy_with(raw_path=base.raw_path.rstrip(b"/") + target.encode())
        try:
            connection = await StreamConnection.open(
                url, headers, connect_timeout=CONNECT_TIMEOUT, read_timeout=self._read_timeout
            )
        except StreamBroken as error:
            raise GatewayUnreachable(self._url, str(error)) from error
        if connection.status != 200:
            try:
                body = await connection.read_body()
            finally:
                connection.close()
            raise problem_from_response(connection.response(body))
        content_type = connection.header("content-type").partition(";")[0].strip()
        if content_type != "text/event-stream":
            connection.close()
            answered = content_type or "no content type"
            raise GatewayError(f"{self._url}{self._path} answered {answered}, not an event stream")
        self._connection = connection
        return self

    async def __aenter__(self) -> EventStream[T]:
        return await self.open()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Closes the stream (the gateway then ends its scan or subscription)."""
        self._closed = True
        await self._drop()

    def __aiter__(self) -> EventStream[T]:
        return self

    async def __anext__(self) -> T:
        if not self._decoded and not await self._fill():
            raise StopAsyncIteration
        return self._parse(self._event(self._decoded.popleft()))

    async def take(self) -> list[T]:
        """Every event that has arrived and not been taken, parsed, in order:
        at least one (waiting for it), or [] once the stream has ended; it
        raises as iterating does. For the reader of a fast stream (the
        Bleak backend's callbacks): a step of its loop for each arrival
        instead of each event."""
        if not self._decoded and not await self._fill():
            return []
        decoded, self._decoded = self._decoded, deque()
        parse, event = self._parse, self._event
        return [parse(event(raw)) for raw in decoded]

    async def _fill(self) -> bool:
        """Waits for an event to be decoded; False once the stream has ended."""
        while not self._decoded:
            if self._closed:
                return False
            if self._connection is None:
                await self._reopen()
            assert self._connection is not None
            try:
                events = await self._connection.receive()
            except StreamBroken as error:
                reason = str(error)
                ended = False
            else:
                if events:
                    self._decoded.extend(events)
                    break
                reason = "the gateway ended the stream"
                ended = True
            await self._drop()
            if self._closed:
                return False
            if not self._resumable:
                if ended:
                    return False
                raise GatewayUnreachable(self._url, f"the stream broke: {reason}")
            logger.info("stream %s: %s; opening it again after event %s", self._path, reason, self.last_event_id)
        return True

    def _event(self, raw: RawEvent) -> StreamEvent:
        event_id = int(raw.id) if raw.id.isdigit() else None
        if event_id == self.last_event_id:
            # SSE hands an event without an id of its own the last one;
            # the gateway never gives two events one id.
            event_id = None
        if event_id is not None:
            self.last_event_id = event_id
        try:
            data: Any = _json.decode(raw.data.decode()) if raw.data else {}
        except ValueError as error:
            raise GatewayError(f"{self._url}{self._path} sent a {raw.event!r} event whose data is not JSON") from error
        return StreamEvent(event=raw.event, id=event_id, data=data if isinstance(data, dict) else {"data": data})

    async def _reopen(self) -> None:
        deadline = time.monotonic() + self._reconnect_timeout
        for attempt in itertools.count():
            try:
                await self.open()
            except GatewayUnreachable:
                if time.monotonic() >= deadline:
                    raise
            except GatewayProblem as problem:
                # A gateway that is starting answers 503 for a moment.
                if problem.status != 503 or time.monotonic() >= deadline:
                    raise
            else:
                if self._on_reconnect is not None:
                    await self._on_reconnect()
                return
            await asyncio.sleep(RECONNECT_DELAYS[min(attempt, len(RECONNECT_DELAYS) - 1)])

    async def _drop(self) -> None:
        """Closes the connection. Events already decoded are still handed out:
        they arrived before the break."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()


def describe(error: httpx.TransportError) -> str:
    """What broke, in words (httpx's messages can be empty)."""
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
