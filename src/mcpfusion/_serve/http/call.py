"""One ``tools/call`` the HTTP hot path runs: its late-starting response, its client channel."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import Any, Final

import anyio
from mcp import types
from mcp.server.connection import Connection
from mcp.shared.exceptions import MCPError
from mcp_types import methods as spec_methods
from starlette.types import Send

from mcpfusion._serve.call import HotCall
from mcpfusion._serve.channel import Channel, R
from mcpfusion._serve.jsonrpc import encode
from mcpfusion._serve.sdk_client import _LEVEL_KEY, ClientHub, declares
from mcpfusion._tools.client import LOG_LEVELS, Feature, LogLevel

__all__ = [
    "SESSION_HEADER",
    "Asks",
    "HttpCall",
    "HttpClient",
    "accepted",
    "json_answer",
    "sse_event",
]

SESSION_HEADER: Final = b"mcp-session-id"
# The SDK's headers for a POST's event stream (its own plus sse-starlette's), same order.
_SSE_HEADERS: Final = (
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"content-type", b"text/event-stream"),
)
_NO_BUFFERING: Final = (b"x-accel-buffering", b"no")
_ASK_IDS: Final = itertools.count(1)

Asks = dict[tuple[str, str], "asyncio.Future[dict[str, Any]]"]
"""Questions to clients awaiting their answers, by session id and request id."""


class HttpCall(HotCall):
    """A ``tools/call`` the HTTP hot path runs, and its HTTP response.

    The response starts late: one JSON body if the handler sends nothing else, else an
    event stream opened by its first notification and ended by the answer. It is stopped
    through its cancel scope, which the handler runs in.
    """

    __slots__ = ("_asks", "_lock", "_send", "_session_id", "scope", "session", "streaming")

    def __init__(self, send: Send, session_id: str, asks: Asks, version: str) -> None:
        super().__init__(version)
        self._send = send
        self._session_id = session_id
        self._asks = asks
        self.session = session_id.encode("latin-1")
        self.scope = anyio.CancelScope()
        self.streaming = False
        self._lock: asyncio.Lock | None = None  # made when a notification is sent

    def stop(self) -> None:
        """Cancels the scope the call's handler runs in."""
        self.scope.cancel()

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Sends a notification on the call's stream (opening it), as the SDK does."""
        if self.over:
            return  # as the SDK's closed request context drops it
        await self._write(encode({"jsonrpc": "2.0", "method": method, "params": params}))

    async def _write(self, data: bytes) -> None:
        """Sends one message on the call's stream, opening it first."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._start_stream()
            event = sse_event(data)
            await self._send({"type": "http.response.body", "body": event, "more_body": True})

    async def ask(self, request: types.ServerRequest, kind: type[R]) -> R:
        """Sends a request to the client on the call's stream and waits for its answer.

        As the SDK's dispatcher does: an error answer raises ``MCPError``, the result is
        validated as the request's result, and a call cancelled while waiting tells the
        client (``notifications/cancelled``) before it ends.
        """
        data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
        # A string id, never one the SDK's own requests to this client use (integers).
        ask_id = f"mcpfusion-{next(_ASK_IDS)}"
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ask_id, "method": data["method"]}
        if data.get("params"):
            message["params"] = data["params"]
        waiting: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        key = (self._session_id, ask_id)
        self._asks[key] = waiting
        try:
            await self._write(encode(message))
            try:
                answer = await waiting
            except BaseException:
                # Cancelled before the answer came (the wait cancels the future too).
                if waiting.cancelled() or not waiting.done():
                    with anyio.CancelScope(shield=True):
                        reason = {"requestId": ask_id, "reason": "caller cancelled"}
                        await self.notify("notifications/cancelled", reason)
                raise
        finally:
            del self._asks[key]
        if "error" in answer:
            error = types.ErrorData.model_validate(answer["error"], by_name=False)
            raise MCPError.from_error_data(error)
        result: dict[str, Any] = answer["result"]
        with contextlib.suppress(KeyError):
            spec_methods.validate_client_result(request.method, self.version, result)
        return kind.model_validate(result, by_name=False)

    async def answer(self, response: bytes) -> None:
        """Sends the JSON-RPC response: the JSON body, or the stream's last event."""
        if self._lock is None:
            await json_answer(self._send, self.session, response)
            return
        async with self._lock:
            await self._send(
                {"type": "http.response.body", "body": sse_event(response), "more_body": False}
            )

    async def end_unanswered(self) -> None:
        """Ends the response of a call the client cancelled: an event stream, no answer.

        What the client sees of the SDK's path: the guard drops the SDK's -32800.
        """
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._start_stream()
            await self._send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _start_stream(self) -> None:
        if not self.streaming:
            self.streaming = True
            headers = [*_SSE_HEADERS, (SESSION_HEADER, self.session), _NO_BUFFERING]
            await self._send({"type": "http.response.start", "status": 200, "headers": headers})


def sse_event(data: bytes) -> bytes:
    """One SSE event as sse-starlette frames the SDK's messages."""
    return b"event: message\r\ndata: " + data + b"\r\n\r\n"


async def json_answer(
    send: Send, session: str | bytes | None, body: bytes, status: int = 200
) -> None:
    """One JSON body, with the headers of the SDK's JSON answers (no session: 2026-07-28's)."""
    headers = [
        (b"content-length", str(len(body)).encode()),
        (b"content-type", b"application/json"),
    ]
    if session is not None:
        headers.append(
            (SESSION_HEADER, session.encode("latin-1") if isinstance(session, str) else session)
        )
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def accepted(send: Send, session: str) -> None:
    """The SDK's ``202 Accepted`` for a client's answer it takes."""
    headers = [
        (b"content-length", b"0"),
        (b"content-type", b"application/json"),
        (SESSION_HEADER, session.encode("latin-1")),
    ]
    await send({"type": "http.response.start", "status": 202, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


class HttpClient(Channel):
    """The ``ClientChannel`` of a hot call: the channel's questions, over the call's stream."""

    def __init__(self, call: HttpCall, connection: Connection, hub: ClientHub) -> None:
        super().__init__(hub)
        self._call = call
        self._connection = connection

    def supports(self, feature: Feature) -> bool:
        """Whether the client declared ``feature`` (a hot call's stream can carry all)."""
        return declares(self._connection.client_capabilities, feature)

    async def log(self, level: LogLevel, data: Any, logger: str) -> None:
        """Sends ``notifications/message`` on the call's stream, at the client's level."""
        # The level the client set (logging/setLevel, which the SDK answers and the
        # client hub keeps on the connection).
        wanted = self._connection.state.get(_LEVEL_KEY, "debug")
        if LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted):
            return
        params = {"level": level, "logger": logger, "data": data}
        await self._call.notify("notifications/message", params)

    async def _ask(self, request: types.ServerRequest, kind: type[R], key: str | None) -> R:
        return await self._call.ask(request, kind)
