"""The HTTP hot path at 2026-07-28: a plain ``tools/call`` POST answered as the SDK would."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from typing import Any, Final

import anyio
import pydantic_core
from mcp import types
from mcp.server import Server
from mcp.server.streamable_http import check_accept_headers
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PARAM_HEADER_PREFIX,
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
)
from mcp_types import ErrorData, JSONRPCError, JSONRPCNotification, JSONRPCResponse
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from mcpfusion._present.response import ToolResponse
from mcpfusion._serve.call import HotCall
from mcpfusion._serve.hotpath import CALL_KEYS, INVALID_RESULT, modern_call_shape, tasked_names
from mcpfusion._serve.http.bearer import identity_of
from mcpfusion._serve.http.call import json_answer, sse_event
from mcpfusion._serve.jsonrpc import RequestId
from mcpfusion._serve.modern import Envelopes, ModernClient, client_name_of
from mcpfusion._serve.protocol import ServableApp
from mcpfusion._serve.results import only_text, respond, sent_result
from mcpfusion._serve.rounds import missing_capability
from mcpfusion._serve.sdk_client import ClientHub
from mcpfusion._tools.client import ClientLacks

__all__ = ["PING_INTERVAL", "ModernCalls", "ascii_json", "reply", "sdk_json"]

logger = logging.getLogger("mcpfusion")

PING_INTERVAL: Final = 15.0
"""Seconds of silence after which an SSE answer is opened (or kept open) with a ping, as the
SDK's single exchange does (``_SSE_PING_INTERVAL``): a proxy's idle-read timeout must not
close the stream of a slow handler."""
_SSE_HEADERS: Final = (
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
)
_PING: Final = b": ping\r\n\r\n"
_PARAM_PREFIX: Final = MCP_PARAM_HEADER_PREFIX.lower()
_ANNOTATION: Final = "x-mcp-header"
_COMPACT: Final = (",", ":")
_REMEMBERED_SCHEMAS: Final = 1024


class ModernCalls:
    """The 2026-07-28 ``tools/call`` POSTs the HTTP hot path answers before the SDK.

    At 2026-07-28 the SDK serves every POST alone, whatever the session options
    (``mcp.server._streamable_http_modern``): the envelope, header and ``Mcp-Param`` checks,
    a connection made of the envelope, then one JSON body, or with ``json_response`` off an
    event stream once the handler sends a notification or stays silent ``PING_INTERVAL``.
    ``take`` answers a request only when each of those checks passes exactly as the SDK
    runs them, with the envelope rules of ``_serve/modern.py``; the answer is the SDK's
    model, serialized as it serializes it. Why that is the same behaviour:
    docs/deployment.md, "The HTTP hot path".
    """

    def __init__(
        self, app: ServableApp, server: Server[Any], hub: ClientHub | None, json_response: bool
    ) -> None:
        self._app = app
        self._json = json_response
        self._client = ModernClient(hub)
        self._envelopes = Envelopes()
        self._stamp = server.server_info_stamp
        self._schemas = server.get_tool_input_schema
        # Input schemas naming no header, by id (the schema kept, so its id is not reused):
        # the SDK's check of such a schema passes whatever the headers, and walking it cost
        # a fifth of this path's checks (``benchmarks/serving.py``).
        self._headerless: dict[int, Any] = {}

    async def take(
        self, scope: Scope, receive: Receive, send: Send, message: dict[str, Any]
    ) -> bool:
        """Answers ``message`` (the guard's parsed body) if the SDK would answer it as this
        path does; ``False`` leaves it to the SDK, untouched."""
        if not message.keys() <= CALL_KEYS or message.get("jsonrpc") != "2.0":
            return False
        request_id = message.get("id")
        if type(request_id) is not int and type(request_id) is not str:
            return False
        if message.get("method") != "tools/call" or self._schemas is None:
            return False
        request = Request(scope)
        has_json, has_sse = check_accept_headers(request)
        if not has_json or not (self._json or has_sse):
            return False  # the SDK's 406
        shape = modern_call_shape(message.get("params"), self._envelopes)
        if shape is None or shape[0] in tasked_names(self._app):
            return False
        name, arguments, meta, token, version = shape
        # The pairs and the mapping the SDK reads (``headers.items()``, ``dict(headers)``:
        # the first value of each name), made once from the raw list (ASGI's names are
        # lower case) instead of by Starlette's lookups, one scan of the list per name.
        pairs = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        if find_duplicated_routing_header(pairs) is not None:
            return False
        verdict = classify_inbound_request(message, headers=dict(reversed(pairs)))
        if not isinstance(verdict, InboundModernRoute) or verdict.protocol_version != version:
            return False
        if not self._params_agree(request.headers, pairs, name, arguments):
            return False
        call = _ModernCall(version, send, streams=not self._json)
        if self._json:
            await self._answer(call, scope, request_id, name, arguments, meta, token)
            return True
        loop = asyncio.get_running_loop()
        watching: list[asyncio.Task[None]] = []
        # The watcher starts once the handler first waits: one that answers without waiting
        # cannot be stopped anyway, and then costs no task (a task per call cost more than
        # the envelope's checks, ``benchmarks/serving.py``).
        start = loop.call_soon(lambda: watching.append(loop.create_task(call.watch(receive))))
        try:
            await self._answer(call, scope, request_id, name, arguments, meta, token)
        finally:
            start.cancel()
            for watcher in watching:
                watcher.cancel()
        return True

    def _params_agree(
        self,
        headers: Headers,
        pairs: list[tuple[str, str]],
        name: str,
        arguments: Mapping[str, Any] | None,
    ) -> bool:
        """Whether the SDK's ``Mcp-Param`` header check passes (a refusal is its to write)."""
        if not arguments and not any(h.startswith(_PARAM_PREFIX) for h, _ in pairs):
            return True
        assert self._schemas is not None  # taken only with them
        try:
            schema = self._schemas(name)
        except Exception:  # the SDK logs it and serves on: its to do
            return False
        if schema is None or self._headerless.get(id(schema)) is schema:
            return True
        if not _names_headers(schema):
            if len(self._headerless) >= _REMEMBERED_SCHEMAS:
                self._headerless.clear()
            self._headerless[id(schema)] = schema
            return True
        return validate_mcp_param_headers(schema, arguments or {}, headers) is None

    async def _answer(
        self,
        call: _ModernCall,
        scope: Scope,
        request_id: RequestId,
        name: str,
        arguments: dict[str, Any] | None,
        meta: Mapping[str, Any] | None,
        token: str | int | None,
    ) -> None:
        response: ToolResponse | ClientLacks
        with call.scope:
            try:
                response = await respond(
                    self._app,
                    name,
                    arguments,
                    meta,
                    call.reporter(token),
                    identity_of(scope),
                    self._client,
                    client_name_of(meta),
                )
            except ClientLacks as lack:  # refused as the SDK's path refuses it
                response = lack
            finally:
                call.over = True
        if call.cancelled:
            return  # the client went away: the SDK's handler is cancelled, nothing is sent
        await call.answer(*reply(request_id, response, call.version, self._stamp))


def _names_headers(schema: Any) -> bool:
    """Whether ``x-mcp-header`` is a key anywhere in ``schema``: without one the SDK's
    ``validate_mcp_param_headers`` finds no annotated argument, so nothing to refuse."""
    if isinstance(schema, Mapping):
        return _ANNOTATION in schema or any(_names_headers(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_names_headers(v) for v in schema)
    return False


def reply(
    request_id: RequestId,
    response: ToolResponse | ClientLacks,
    version: str,
    stamp: Mapping[str, Any] | None,
) -> tuple[int, bytes]:
    """The HTTP status and JSON text of the SDK's single-exchange reply to a call that
    ``response`` answers."""
    message: JSONRPCResponse | JSONRPCError
    if isinstance(response, ClientLacks):
        error = missing_capability(response).error
        message = JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        return ERROR_CODE_HTTP_STATUS.get(error.code, 200), sdk_json(message)
    try:
        result = sent_result(response, version, stamp)
    except ValueError:  # pydantic's ValidationError, answered as the SDK's runner does
        logger.exception("handler for 'tools/call' returned an invalid result")
        error = ErrorData(code=types.INTERNAL_ERROR, message=INVALID_RESULT)
        return 200, sdk_json(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))
    if response.structured_content is None and only_text(response):
        # Strings and booleans only (text blocks, their audience, the stamp), which the
        # model's JSON-mode dump leaves as they are: the same text without building it,
        # 20 µs of this path's 2026 call (``benchmarks/serving.py``).
        return 200, ascii_json({"jsonrpc": "2.0", "id": request_id, "result": result})
    return 200, sdk_json(JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result))


def ascii_json(data: dict[str, Any]) -> bytes:
    """``json.dumps(data, separators=(",", ":"))``, from pydantic's serializer when that
    writes the same bytes: an ASCII text without DEL, which both escape alike (the stdlib
    escapes DEL and every non-ASCII character, pydantic neither), in a fifth of the time."""
    try:
        fast = pydantic_core.to_json(data)
    except (pydantic_core.PydanticSerializationError, ValueError):  # a lone surrogate
        fast = b"\x80"
    if fast.isascii() and b"\x7f" not in fast:
        return fast
    return json.dumps(data, separators=_COMPACT).encode()


def sdk_json(message: JSONRPCResponse | JSONRPCError | JSONRPCNotification) -> bytes:
    """``message`` as the SDK's single exchange writes it: its model's JSON mode dump,
    through the standard library's ``json`` (ASCII only, no spaces)."""
    body = message.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps(body, separators=_COMPACT).encode()


class _ModernCall(HotCall):
    """A 2026-07-28 ``tools/call`` the HTTP hot path runs, and its response.

    With ``streams`` off (``json_response``) its notifications go nowhere and its answer
    is one JSON body; with it on, the answer is a JSON body unless a notification or
    ``PING_INTERVAL`` of silence opens an event stream first, as in the SDK. Stopped (the
    client disconnected) through its cancel scope, which the handler runs in.
    """

    __slots__ = ("_closed", "_last", "_lock", "_send", "_streams", "scope", "streaming")

    def __init__(self, version: str, send: Send, *, streams: bool) -> None:
        super().__init__(version)
        self._send = send
        self._streams = streams
        self.scope = anyio.CancelScope()
        self.streaming = False
        self._closed = False  # answered: nothing more is written
        self._lock: asyncio.Lock | None = None  # made by the first event or ping
        self._last = asyncio.get_running_loop().time()  # when the client last got something

    def stop(self) -> None:
        """Cancels the scope the call's handler runs in."""
        self.cancelled = True
        self.scope.cancel()

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Sends the notification as an event, opening the stream (JSON answers drop it)."""
        if self.over or not self._streams:
            return
        notice = JSONRPCNotification(jsonrpc="2.0", method=method, params=params)
        await self._write(sse_event(sdk_json(notice)))

    async def _write(self, data: bytes) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._closed:
                return
            if not self.streaming:
                self.streaming = True
                start = {"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS}
                await self._send(start)
            await self._send({"type": "http.response.body", "body": data, "more_body": True})
            self._last = asyncio.get_running_loop().time()

    async def watch(self, receive: Receive) -> None:
        """Pings after each ``PING_INTERVAL`` of silence; stops the call on a disconnect."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                async with asyncio.timeout(self._last + PING_INTERVAL - loop.time()):
                    message = await receive()
            except TimeoutError:
                if loop.time() - self._last >= PING_INTERVAL:
                    await self._write(_PING)
                continue
            if message.get("type") == "http.disconnect":
                self.stop()
                return

    async def answer(self, status: int, data: bytes) -> None:
        """Sends the reply: a JSON body with ``status`` (the SDK's for its error code), or
        the stream's last event."""
        if self._lock is None:  # nothing written: nothing is being written either
            self._closed = True
            await json_answer(self._send, None, data, status)
            return
        async with self._lock:
            self._closed = True  # a ping due now is not sent after it
            if self.streaming:
                end = {"type": "http.response.body", "body": sse_event(data), "more_body": False}
                await self._send(end)
                return
            await json_answer(self._send, None, data, status)
