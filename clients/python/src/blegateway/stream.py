"""A Server-Sent-Events stream of the gateway, read with httpx-sse."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic, TypeVar

import httpx
from httpx_sse import EventSource, ServerSentEvent

from .models import StreamEvent
from .problem import GatewayError, GatewayProblem, GatewayUnreachable, problem_from_response

T = TypeVar("T")

logger = logging.getLogger(__name__)

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
        self._response: httpx.Response | None = None
        self._events: AsyncIterator[ServerSentEvent] | None = None
        self._closed = False

    async def open(self) -> EventStream[T]:
        """Sends the request; raises `GatewayProblem` or `GatewayUnreachable`."""
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        if self.last_event_id is not None:
            headers["Last-Event-ID"] = str(self.last_event_id)
        timeout = httpx.Timeout(10.0, read=self._read_timeout)
        request = self._client.build_request(
            "GET", self._path, params=tuple(self._params), headers=headers, timeout=timeout
        )
        try:
            response = await self._client.send(request, stream=True)
        except httpx.TransportError as error:
            raise GatewayUnreachable(self._url, describe(error)) from error
        if response.status_code != 200:
            try:
                await response.aread()
            finally:
                await response.aclose()
            raise problem_from_response(response)
        self._response = response
        self._events = EventSource(response).aiter_sse()
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
        while True:
            if self._closed:
                raise StopAsyncIteration
            if self._events is None:
                await self._reopen()
            assert self._events is not None
            try:
                sse = await self._events.__anext__()
            except StopAsyncIteration:
                reason = "the gateway ended the stream"
                ended = True
            except httpx.TransportError as error:
                reason = describe(error)
                ended = False
            else:
                return self._parse(self._event(sse))
            await self._drop()
            if self._closed:
                raise StopAsyncIteration
            if not self._resumable:
                if ended:
                    raise StopAsyncIteration
                raise GatewayUnreachable(self._url, f"the stream broke: {reason}")
            logger.info("stream %s: %s; opening it again after event %s", self._path, reason, self.last_event_id)

    def _event(self, sse: ServerSentEvent) -> StreamEvent:
        event_id = int(sse.id) if sse.id and sse.id.isdigit() else None
        if event_id == self.last_event_id:
            # SSE hands an event without an id of its own the last one;
            # the gateway never gives two events one id.
            event_id = None
        if event_id is not None:
            self.last_event_id = event_id
        try:
            data: Any = json.loads(sse.data) if sse.data else {}
        except ValueError as error:
            raise GatewayError(f"{self._url}{self._path} sent a {sse.event!r} event whose data is not JSON") from error
        return StreamEvent(event=sse.event, id=event_id, data=data if isinstance(data, dict) else {"data": data})

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
        events, response = self._events, self._response
        self._events = None
        self._response = None
        if events is not None and hasattr(events, "aclose"):
            try:
                await events.aclose()
            except (httpx.TransportError, RuntimeError):
                pass
        if response is not None:
            await response.aclose()


def describe(error: httpx.TransportError) -> str:
    """What broke, in words (httpx's messages can be empty)."""
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
