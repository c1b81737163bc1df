"""The HTTP/1.1 connection an event stream is read from."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Sequence

import h11
import httpx

from .sse import EventDecoder, RawEvent

MAX_QUEUED_EVENTS = 8192
"""Decoded events held for a consumer that has not taken them before the
connection stops reading; the gateway then holds the rest (and drops a
stream that falls too far behind, as it would any slow reader)."""


class StreamBroken(Exception):
    """The connection broke, or stayed silent for longer than allowed."""


class StreamConnection(asyncio.Protocol):
    """One `GET` whose answer is an event stream, on a connection of its own.

    httpx reads a streamed body through httpcore and anyio, which for every
    read arm the socket in the selector again, open a timeout scope and pass
    the bytes up through four layers. On a notification stream at 4,000
    values/s, where most reads bring one event, that was 45% of the
    reader's CPU (130 µs a value in all on a loaded 2-core machine;
    BENCHMARKS.md, "Notification to a Bleak callback"). Here the event loop
    calls `data_received` with whatever has arrived, h11 (the HTTP/1.1
    parser httpx itself uses) takes the chunked framing off, and
    `EventDecoder` turns all of it into events in one pass (61 µs a value).

    It connects directly (or with TLS for `https`), without the proxy
    settings of the environment that httpx would honour.
    """

    def __init__(self, read_timeout: float) -> None:
        self._read_timeout = read_timeout
        self._h11 = h11.Connection(our_role=h11.CLIENT)
        self._decoder = EventDecoder()
        self._transport: asyncio.Transport | None = None
        self._loop = asyncio.get_running_loop()
        self._head: asyncio.Future[h11.Response] = self._loop.create_future()
        self._body = bytearray()
        """An answer that is not a stream (a problem document)."""
        self._events: list[RawEvent] = []
        self._waiter: asyncio.Future[None] | None = None
        self._ended = False
        self._closed = False
        """Closed by this side: what still arrives is not read."""
        self._broken: str | None = None
        self._paused = False
        self._last_data = self._loop.time()
        self._silence: asyncio.TimerHandle | None = None

    @classmethod
    async def open(
        cls,
        url: httpx.URL,
        headers: Sequence[tuple[str, str]],
        *,
        connect_timeout: float,
        read_timeout: float,
    ) -> StreamConnection:
        """Connects, sends the request and waits for the answer's head.
        Raises `StreamBroken` if that fails or takes over `connect_timeout`."""
        loop = asyncio.get_running_loop()
        connection = cls(read_timeout)
        host = url.host
        port = url.port or (443 if url.scheme == "https" else 80)
        context: ssl.SSLContext | None = httpx.create_ssl_context() if url.scheme == "https" else None
        target = url.raw_path
        request = h11.Request(method="GET", target=target, headers=[("Host", url.netloc.decode()), *headers])

        async def connect() -> None:
            await loop.create_connection(
                lambda: connection, host, port, ssl=context, server_hostname=host if context else None
            )
            connection._send(request)
            await connection._head

        try:
            await asyncio.wait_for(connect(), connect_timeout)
        except asyncio.TimeoutError as error:
            connection.close()
            raise StreamBroken(f"no answer within {connect_timeout:.0f} s") from error
        except OSError as error:
            connection.close()
            raise StreamBroken(f"{type(error).__name__}: {error}") from error
        return connection

    @property
    def status(self) -> int:
        return self._head.result().status_code

    def header(self, name: str) -> str:
        """A header of the answer ("" if it has none)."""
        wanted = name.lower().encode()
        for key, value in self._head.result().headers:
            if key == wanted:
                return str(value.decode("latin-1"))
        return ""

    def response(self, body: bytes) -> httpx.Response:
        """The answer as an httpx response with `body` (for a problem)."""
        head = self._head.result()
        headers = [(key.decode("latin-1"), value.decode("latin-1")) for key, value in head.headers]
        return httpx.Response(head.status_code, headers=headers, content=body)

    async def read_body(self) -> bytes:
        """The rest of an answer that is not an event stream."""
        while not self._ended and self._broken is None:
            await self._wait()
        return bytes(self._body)

    async def receive(self) -> list[RawEvent]:
        """The events decoded since the last call, waiting for one; [] once
        the gateway ended the stream. Raises `StreamBroken`."""
        while not self._events:
            if self._broken is not None:
                raise StreamBroken(self._broken)
            if self._ended:
                return []
            await self._wait()
        events, self._events = self._events, []
        if self._paused and self._transport is not None:
            self._paused = False
            self._transport.resume_reading()
        return events

    def close(self) -> None:
        self._closed = True
        if self._silence is not None:
            self._silence.cancel()
        if self._transport is not None:
            self._transport.close()
        self._fail("closed")

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self._silence = self._loop.call_later(self._read_timeout, self._check_silence)

    def data_received(self, data: bytes) -> None:
        # Bytes read in the same turn as a close (one that gave up waiting
        # for the head, say) still arrive here; they belong to no one.
        if self._closed:
            return
        self._last_data = self._loop.time()
        self._h11.receive_data(data)
        self._process()
        if len(self._events) >= MAX_QUEUED_EVENTS and not self._paused and self._transport is not None:
            self._paused = True
            self._transport.pause_reading()

    def eof_received(self) -> bool | None:
        if self._closed:
            return None
        self._h11.receive_data(b"")
        self._process()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._silence is not None:
            self._silence.cancel()
        self._fail(f"{type(exc).__name__}: {exc}" if exc else "the connection closed")

    # Inside

    def _send(self, event: h11.Request) -> None:
        assert self._transport is not None
        self._transport.write(self._h11.send(event) + (self._h11.send(h11.EndOfMessage()) or b""))

    def _process(self) -> None:
        try:
            while True:
                event = self._h11.next_event()
                if event is h11.NEED_DATA or event is h11.PAUSED:
                    break
                if isinstance(event, h11.Data):
                    if self._head.result().status_code == 200:
                        self._events.extend(self._decoder.feed(bytes(event.data)))
                    else:
                        self._body += event.data
                elif isinstance(event, h11.Response):
                    self._head.set_result(event)
                elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    self._ended = True
                    break
        except h11.RemoteProtocolError as error:
            self._fail(f"RemoteProtocolError: {error}")
            self.close()
        self._wake()

    def _fail(self, reason: str) -> None:
        if not self._ended and self._broken is None:
            self._broken = reason
        if not self._head.done():
            self._head.set_exception(StreamBroken(reason))
            self._head.exception()  # retrieved here: `open` may no longer be waiting for it
        self._wake()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _wait(self) -> None:
        self._waiter = self._loop.create_future()
        await self._waiter

    def _check_silence(self) -> None:
        """The gateway sends a heartbeat when idle: silence for
        `read_timeout` means the connection is gone without a word."""
        quiet = self._loop.time() - self._last_data
        if quiet < self._read_timeout:
            self._silence = self._loop.call_later(self._read_timeout - quiet, self._check_silence)
            return
        self._fail(f"nothing received for {self._read_timeout:.0f} s")
        self.close()
