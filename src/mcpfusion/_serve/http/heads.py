"""uvicorn's HTTP/1.1 protocols with bounded request heads and one write per loop turn."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from mcpfusion._serve.options import DEFAULT_MAX_HEAD_BYTES, DEFAULT_MAX_HEADERS, HttpOptions

__all__ = ["head_bounded_protocol"]

logger = logging.getLogger("mcpfusion")


class _Coalesced:
    """A transport whose writes within one event-loop turn leave in one ``write`` call.

    uvicorn writes a response's head and its body separately: two system calls, and two
    wake-ups of a client that reads the head first. Held until the turn ends, they leave
    together. Everything but ``write`` and ``close`` is the transport's own.
    """

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._held:
            self._loop.call_soon(self._flush)
        self._held.append(data)

    def _flush(self) -> None:
        if self._held:
            data = b"".join(self._held)
            self._held.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class _HeadTimer(asyncio.Protocol):
    """Bounds a request head: the time it takes, its bytes and its header fields.

    A head past ``max_head_bytes`` or ``max_headers`` is answered 431 (``_refuse_head``)
    and its connection closed: neither uvicorn nor llhttp bound them, so one head could
    hold any amount of memory before a check or authorization saw it.

    uvicorn times out idle keep-alive connections but not one that sends its head a byte
    at a time (slowloris): such a connection is closed ``head_timeout`` seconds after it
    started the head it never finished. The protocol says when a head starts and ends.
    """

    head_timeout: float = 10.0
    max_head_bytes: int = DEFAULT_MAX_HEAD_BYTES
    max_headers: int = DEFAULT_MAX_HEADERS
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    _head_timer: asyncio.TimerHandle | None = None
    _refusal: str | None = None  # why the parser was stopped in a head, if it was

    def _in_head(self) -> bool:
        raise NotImplementedError

    def _arm(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.head_timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _too_slow(self) -> None:
        self._head_timer = None
        if self._in_head() and not self.transport.is_closing():
            self.transport.close()

    def _oversized(self, size: int, fields: int) -> str | None:
        """Why a head of ``size`` bytes and ``fields`` header fields is refused, if it is."""
        if fields > self.max_headers:
            return f"more than {self.max_headers} header fields"
        if size > self.max_head_bytes:
            return f"a request head over {self.max_head_bytes} bytes"
        return None

    def _refuse_head(self, reason: str) -> None:
        """Answers 431 and closes the connection: the rest of the head is never read."""
        if self.transport.is_closing():
            return
        logger.info("refused a request with %s", reason)
        body = f"Request header fields too large: {reason}".encode()
        head = (
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
            b"content-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n" % len(body)
        )
        self.transport.write(head + body)
        self.transport.close()


class _HeadRefused(Exception):
    """Stops httptools' parser in a head past a bound."""


class _BoundedH11(h11.Connection):
    """h11's server side, refusing a head past the protocol's bounds (431).

    h11 bounds a head it has not finished reading (``max_incomplete_event_size``); a whole
    head read at once, and the number of fields, are checked here when it is parsed.
    """

    def __init__(self, protocol: _HeadTimer) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=protocol.max_head_bytes)
        self.protocol = protocol

    def next_event(self) -> Any:
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as exc:
            if exc.error_status_hint == 431:  # h11's own bound on an unfinished head
                self.protocol._refusal = self.protocol._oversized(
                    self.protocol.max_head_bytes + 1, 0
                )
            raise
        if isinstance(event, h11.Request):
            size = len(event.target) + sum(len(k) + len(v) + 4 for k, v in event.headers)
            self.protocol._refusal = self.protocol._oversized(size, len(event.headers))
            if self.protocol._refusal is not None:
                raise h11.RemoteProtocolError(self.protocol._refusal, error_status_hint=431)
        return event


class _H11HeadTimeout(_HeadTimer, H11Protocol):
    """uvicorn's h11 protocol with the head timer and bounds (when httptools is missing)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = _BoundedH11(self)

    def send_400_response(self, msg: str) -> None:
        if self._refusal is not None:
            self._refuse_head(self._refusal)
        else:
            super().send_400_response(msg)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._in_head():
            self._arm()
        super().data_received(data)
        if not self._in_head():
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _in_head(self) -> bool:
        return self.conn.their_state is h11.IDLE


try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - httptools is a dependency; h11 is the fallback
    _HTTPTOOLS: type[_HeadTimer] | None = None
else:

    class _HttpToolsHeadTimeout(_HeadTimer, HttpToolsProtocol):
        """uvicorn's httptools protocol (llhttp, in C) with the head timer and bounds.

        llhttp bounds nothing, and httptools gathers a header until it ends: a head still
        arriving is bounded by the raw bytes received for it and the fields parsed so far,
        checked after each chunk. A head that ended within a chunk is measured exactly
        only when the raw count cannot vouch for it (over the bound because a body came
        in the same chunk, or a pipelined head that began mid-chunk): counting each field
        as the parser hands it over cost 0.5 us a field, 4-8 us a request.
        """

        _reading_head = True
        _between = True  # no message started since the last one ended
        _chunk = 0  # a chunk's size when it begins with a head, else 0
        _head_bytes = 0  # raw bytes received for the current head (at least)
        _measured = True  # whether _head_bytes counts the current head from its start

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            coalesced: Any = _Coalesced(transport, self.loop)
            super().connection_made(coalesced)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._between:
                self._chunk = len(data)
            elif self._reading_head:
                self._head_bytes += len(data)
            super().data_received(data)
            self._chunk = 0
            if self._reading_head and not self._between:
                # Every byte counted so far belongs to the unfinished head.
                reason = self._oversized(self._head_bytes, len(self.headers))
                if reason is not None:
                    self._refuse_head(reason)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._reading_head = True
            self._measured = self._chunk > 0
            self._head_bytes = self._chunk
            self._between = False
            self._arm()

        def on_headers_complete(self) -> None:
            self._reading_head = False
            self._disarm()
            fields = len(self.headers)
            size = self._head_bytes
            if size > self.max_head_bytes or not self._measured:
                size = len(self.url) + sum(len(k) + len(v) + 4 for k, v in self.headers)
            self._refusal = self._oversized(size, fields)
            if self._refusal is not None:
                # feed_data raises: uvicorn answers send_400_response, which says 431.
                raise _HeadRefused(self._refusal)
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._between = True
            super().on_message_complete()

        def send_400_response(self, msg: str) -> None:
            if self._refusal is not None:
                self._refuse_head(self._refusal)
            else:
                super().send_400_response(msg)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _in_head(self) -> bool:
            return self._reading_head

    _HTTPTOOLS = _HttpToolsHeadTimeout


def head_bounded_protocol(options: HttpOptions) -> type[_HeadTimer]:
    """uvicorn's HTTP protocol with bounds on the time, size and fields of a request head.

    The httptools parser when it is installed (a dependency everywhere it builds), else
    h11. ``benchmarks/serving.py`` compares it, on uvloop, with h11 on asyncio: 1.05x to
    1.16x the calls per second of a 2025-11-25 session on the 2-core machine, within noise.
    """
    base = _HTTPTOOLS or _H11HeadTimeout
    bounds = {
        "head_timeout": options.header_timeout,
        "max_head_bytes": options.max_head_bytes,
        "max_headers": options.max_headers,
    }
    return type("HeadTimeout", (base,), bounds)
