"""The HTTP hot path: a session's ``tools/call`` and ``tools/list`` answered before the SDK.

An ASGI app in front of the SDK's session manager. A POST carrying one such request of an
initialized 2025-era session is answered here, with one JSON body when the handler sends
nothing else, or with an SSE stream from the first notification on; every other request
goes to the SDK unchanged. Why that is the SDK's behaviour: docs/deployment.md, "The HTTP
hot path".
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

import anyio
import pydantic_core
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult
from mcp.server.streamable_http import StreamableHTTPServerTransport, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.exceptions import MCPError
from mcp.types import methods
from mcp_types import methods as spec_methods
from pydantic import ValidationError
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from mcpfusion._bearer import identity_of
from mcpfusion._client import LOG_LEVELS, Feature, LogLevel
from mcpfusion._context import Progress
from mcpfusion._hotpath import plain_sdk_path, respond, result_line
from mcpfusion._jsonrpc import RequestId, encode
from mcpfusion._response import ToolResponse
from mcpfusion._sdk import ServableApp, to_call_tool_result
from mcpfusion._sdk_client import _LEVEL_KEY, ClientHub, R, SdkClient
from mcpfusion._streams import SessionManager

__all__ = ["HotEndpoint"]

_CALL_KEYS: Final = frozenset({"jsonrpc", "id", "method", "params"})
_CALL_PARAMS: Final = frozenset({"name", "arguments", "_meta"})
_PROGRESS_ONLY: Final = frozenset({"progressToken"})
_HOT_METHODS: Final = frozenset({"tools/call", "tools/list"})
_METHODS: Final = frozenset({"POST", "DELETE"})
_SESSION: Final = b"mcp-session-id"
_VERSION: Final = b"mcp-protocol-version"
# The SDK's headers for a POST's event stream (its own plus sse-starlette's), same order.
_SSE_HEADERS: Final = (
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"content-type", b"text/event-stream"),
)
_NO_BUFFERING: Final = (b"x-accel-buffering", b"no")
_ASK_IDS: Final = itertools.count(1)
_ANSWER_KEYS: Final = frozenset({"jsonrpc", "id", "result", "error"})

Asks = dict[tuple[str, str], "asyncio.Future[dict[str, Any]]"]
"""Questions to clients awaiting their answers, by session id and request id."""


class _Connections:
    """Server middleware noting each session's connection by session id.

    The hot path reads what the SDK negotiated there: the protocol version, whether
    ``initialize`` was accepted, the client's capabilities and its log level.
    """

    def __init__(self) -> None:
        self.by_session: weakref.WeakValueDictionary[str, Connection] = (
            weakref.WeakValueDictionary()
        )

    async def __call__(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        # The SDK keeps the connection behind the request's session (as _sdk_client reads it).
        connection = getattr(ctx.session, "_connection", None)
        if isinstance(connection, Connection) and connection.session_id is not None:
            self.by_session.setdefault(connection.session_id, connection)
        return await call_next(ctx)


class HotEndpoint:
    """The MCP endpoint: the hot path, in front of the SDK's session manager.

    On only for what it can serve as the SDK does: stateful SSE sessions (not stateless,
    not ``json_response``, no event store to resume from) of a server with no middleware,
    cache hints or tracer provider of its own (``plain_sdk_path``).
    """

    def __init__(
        self, manager: SessionManager, server: Server[Any], app: ServableApp, hub: ClientHub | None
    ) -> None:
        self._sdk = StreamableHTTPASGIApp(manager)
        self._manager = manager
        self._app = app
        self._hub = hub
        self._connections = _Connections()
        self.enabled = (
            not manager.stateless
            and not manager.json_response
            and manager.event_store is None
            and plain_sdk_path(server)
            and hub is not None
        )
        if self.enabled:
            server.middleware.append(self._connections)
        self._calls: dict[tuple[str, RequestId], _Call] = {}  # running, by session and id
        self._asks: Asks = {}  # questions to clients awaiting their answers
        self._listed: dict[tuple[frozenset[str] | None, str | None, str], bytes] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.enabled or scope["type"] != "http" or scope["method"] not in _METHODS:
            await self._sdk(scope, receive, send)
            return
        session_id = version = None
        for name, value in scope["headers"]:
            if name == _SESSION:
                session_id = value.decode("latin-1")
            elif name == _VERSION:
                version = value.decode("latin-1")
        if session_id is None:  # initialize, or a request the SDK refuses
            await self._sdk(scope, receive, send)
            return
        if scope["method"] == "DELETE":
            await self._sdk(scope, receive, send)
            self._ended(session_id)
            return
        # The guard in front hands the whole body in one message.
        first = await receive()
        receive = _replay(first, receive)
        if first["type"] == "http.request" and not first.get("more_body", False):
            try:
                message = pydantic_core.from_json(first.get("body", b""))
            except ValueError:
                message = None
            if isinstance(message, dict):
                method = message.get("method")
                if method in _HOT_METHODS and "id" in message:
                    if await self._take(scope, send, session_id, version, message):
                        return
                elif method == "notifications/cancelled" and self._calls:
                    self._cancel(scope, session_id, message)
                elif method is None and self._asks and self._answered(scope, session_id, message):
                    await _accepted(send, session_id)
                    return
        await self._sdk(scope, receive, send)

    # -- whether the SDK would serve this request of this session as the hot path does ----

    def _transport(self, scope: Scope, session_id: str) -> StreamableHTTPServerTransport | None:
        """The session's transport if the SDK would hand it the request (as its manager does)."""
        manager = self._manager
        transport = manager._server_instances.get(session_id)
        if transport is None or transport.is_terminated:
            return None
        user = scope.get("user")
        requestor = authorization_context(user) if isinstance(user, AuthenticatedUser) else None
        if requestor != manager._session_owners.get(session_id):
            return None  # the SDK answers 404: only the credential that opened it may use it
        idle = transport.idle_scope
        if idle is not None and idle.cancel_called:
            return None
        return transport

    def _connection(self, scope: Scope, session_id: str, version: str | None) -> Connection | None:
        """The session's connection, if the hot path may answer on it."""
        connection = self._connections.by_session.get(session_id)
        if (
            connection is None
            or not connection.initialize_accepted
            or version != connection.protocol_version
        ):
            return None
        has_json, has_sse = check_accept_headers(Request(scope))
        return connection if has_json and has_sse else None

    async def _take(
        self,
        scope: Scope,
        send: Send,
        session_id: str,
        version: str | None,
        message: dict[str, Any],
    ) -> bool:
        if not message.keys() <= _CALL_KEYS or message.get("jsonrpc") != "2.0":
            return False
        request_id = message["id"]
        if type(request_id) is not int and type(request_id) is not str:
            return False
        params = message.get("params", {})
        shape: tuple[Any, ...] | None = None
        if message["method"] == "tools/call":
            shape = _call_shape(params)
            if shape is None:
                return False
        elif not (params is None or params == {}) or getattr(self._app, "toggled", False):
            return False  # a cursor, or a tool list changed at run time: the SDK lists
        transport = self._transport(scope, session_id)
        if transport is None:
            return False
        connection = self._connection(scope, session_id, version)
        if connection is None:
            return False
        with _held(transport):
            if shape is None:
                body = self._list_body(scope, request_id, connection.protocol_version)
                await _json(send, session_id, body)
            else:
                await self._call(scope, send, session_id, connection, request_id, *shape)
        return True

    # -- tools/call ---------------------------------------------------------------------

    async def _call(
        self,
        scope: Scope,
        send: Send,
        session_id: str,
        connection: Connection,
        request_id: RequestId,
        name: str,
        arguments: dict[str, Any] | None,
        meta: Mapping[str, Any] | None,
        token: str | int | None,
    ) -> None:
        call = _Call(send, session_id, self._asks, connection.protocol_version)
        key = (session_id, coerce_request_id(request_id))
        # Registered before the handler starts: a cancellation right behind it finds it.
        self._calls[key] = call
        assert self._hub is not None  # enabled only with one
        client = _HttpClient(call, connection, self._hub)
        with call.scope:
            try:
                progress = _no_progress if token is None else call.progress(token)
                response = await respond(
                    self._app, name, arguments, meta, progress, identity_of(scope), client
                )
            finally:
                call.over = True
                if self._calls.get(key) is call:  # a reused id may have replaced it
                    del self._calls[key]
            # No await since the handler returned: a cancellation cannot slip in between.
            if not call.cancelled:
                await call.answer(_result(request_id, response, connection.protocol_version))
                return
        await call.end_unanswered()

    def _cancel(self, scope: Scope, session_id: str, message: dict[str, Any]) -> None:
        """Stops the hot call a ``notifications/cancelled`` names; the SDK still gets it.

        Only when the SDK would take the notification for that session (same checks).
        """
        params = message.get("params")
        if not isinstance(params, dict) or self._transport(scope, session_id) is None:
            return
        request_id = params.get("requestId")
        if type(request_id) is not int and type(request_id) is not str:
            return
        call = self._calls.get((session_id, coerce_request_id(request_id)))
        if call is not None:
            call.cancelled = True
            call.scope.cancel()

    def _answered(self, scope: Scope, session_id: str, message: dict[str, Any]) -> bool:
        """Hands a client's answer to the hot call that asked, if one did.

        Only from the session's credential, as the SDK takes it; anything else is the SDK's.
        """
        request_id = message.get("id")
        if type(request_id) is not str or message.keys() - _ANSWER_KEYS:
            return False
        waiting = self._asks.get((session_id, request_id))
        if waiting is None or waiting.done() or self._transport(scope, session_id) is None:
            return False
        if "result" in message and "error" not in message:
            if type(message["result"]) is not dict:
                return False
        elif "error" in message and "result" not in message:
            try:
                types.ErrorData.model_validate(message["error"], by_name=False)
            except ValidationError:
                return False  # the SDK refuses it (400), and the call waits on
        else:
            return False
        waiting.set_result(message)
        return True

    def _ended(self, session_id: str) -> None:
        """Stops the hot calls of a session the client ended (DELETE), unanswered.

        The SDK ends the streams of its own requests then, with no answer.
        """
        if session_id in self._manager._server_instances:
            return  # refused, or not that session's credential
        for (session, _), call in list(self._calls.items()):
            if session == session_id:
                call.cancelled = True
                call.scope.cancel()

    # -- tools/list ---------------------------------------------------------------------

    def _list_body(self, scope: Scope, request_id: RequestId, version: str) -> bytes:
        """The SDK's answer to ``tools/list``: ``build_server``'s view for the caller."""
        identity = identity_of(scope)
        key = (self._app.scope_key(identity), identity.tenant if identity else None, version)
        listed = self._listed.get(key)
        if listed is None:
            found = self._app.list_tools(key[0], tenant=key[1])
            tools = [types.Tool.model_validate(tool) for tool in found]
            dumped = types.ListToolsResult(tools=tools).model_dump(
                by_alias=True, mode="json", exclude_none=True
            )
            listed = encode(methods.serialize_server_result("tools/list", version, dumped))
            self._listed[key] = listed
        return b'{"jsonrpc":"2.0","id":' + encode(request_id) + b',"result":' + listed + b"}"


def _call_shape(params: Any) -> tuple[Any, ...] | None:
    """``(name, arguments, meta, token)`` of ``tools/call`` params the SDK takes unchanged.

    The stdio hot path's rule (``HotPath.take``): only ``name``, ``arguments`` (an object
    or null) and ``_meta`` (null, or at most a string or integer ``progressToken``).
    """
    if type(params) is not dict or not params.keys() <= _CALL_PARAMS:
        return None
    name = params.get("name")
    arguments = params.get("arguments")
    if type(name) is not str or not (arguments is None or type(arguments) is dict):
        return None
    meta: Mapping[str, Any] | None = None
    token = None
    if "_meta" in params and (raw := params["_meta"]) is not None:
        if type(raw) is not dict or not raw.keys() <= _PROGRESS_ONLY:
            return None
        if "progressToken" in raw:
            token = raw["progressToken"]
            if type(token) is not int and type(token) is not str:
                return None
        # The SDK hands the handler its validated view of _meta (progress_token, ...).
        meta = types.RequestParams.model_validate({"_meta": raw}, by_name=False).meta
    return name, arguments, meta, token


def _result(request_id: RequestId, response: ToolResponse, version: str) -> bytes:
    """The SDK's JSON-RPC response carrying ``response``."""
    if not response.annotations and not response.attachments:
        return result_line(request_id, response)
    # Annotated blocks and attachments: the SDK's own model and per-version shaping.
    dumped = to_call_tool_result(response).model_dump(by_alias=True, mode="json", exclude_none=True)
    result = methods.serialize_server_result("tools/call", version, dumped)
    return encode({"jsonrpc": "2.0", "id": request_id, "result": result})


async def _no_progress(done: float, total: float | None, message: str | None) -> None:
    """What a call without a progress token reports to: nobody, as in the SDK."""


class _Call:
    """A ``tools/call`` the hot path runs, and its HTTP response.

    The response starts late: one JSON body if the handler sends nothing else, else an
    event stream opened by its first notification and ended by the answer.
    """

    __slots__ = (
        "_asks",
        "_lock",
        "_send",
        "_session_id",
        "_version",
        "cancelled",
        "over",
        "scope",
        "session",
        "streaming",
    )

    def __init__(self, send: Send, session_id: str, asks: Asks, version: str) -> None:
        self._send = send
        self._session_id = session_id
        self._asks = asks
        self._version = version
        self.session = session_id.encode("latin-1")
        self.scope = anyio.CancelScope()
        self.cancelled = False  # by the client: nothing more is sent for it
        self.over = False  # the handler returned: later notifications are dropped
        self.streaming = False
        self._lock: asyncio.Lock | None = None  # made when a notification is sent

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
            event = _event(data)
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
            spec_methods.validate_client_result(request.method, self._version, result)
        return kind.model_validate(result, by_name=False)

    def progress(self, token: str | int) -> Progress:
        """The call's progress reporter: ``notifications/progress`` with ``token``."""

        async def report(done: float, total: float | None, message: str | None) -> None:
            params: dict[str, Any] = {"progressToken": token, "progress": done}
            if total is not None:
                params["total"] = total
            if message is not None:
                params["message"] = message
            await self.notify("notifications/progress", params)

        return report

    async def answer(self, response: bytes) -> None:
        """Sends the JSON-RPC response: the JSON body, or the stream's last event."""
        if self._lock is None:
            await _json(self._send, self.session, response)
            return
        async with self._lock:
            await self._send(
                {"type": "http.response.body", "body": _event(response), "more_body": False}
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
            headers = [*_SSE_HEADERS, (_SESSION, self.session), _NO_BUFFERING]
            await self._send({"type": "http.response.start", "status": 200, "headers": headers})


def _event(data: bytes) -> bytes:
    """One SSE event as sse-starlette frames the SDK's messages."""
    return b"event: message\r\ndata: " + data + b"\r\n\r\n"


async def _json(send: Send, session: str | bytes, body: bytes) -> None:
    """One JSON body, with the headers of the SDK's JSON answers."""
    if isinstance(session, str):
        session = session.encode("latin-1")
    headers = [
        (b"content-length", str(len(body)).encode()),
        (b"content-type", b"application/json"),
        (_SESSION, session),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _accepted(send: Send, session: str) -> None:
    """The SDK's ``202 Accepted`` for a client's answer it takes."""
    headers = [
        (b"content-length", b"0"),
        (b"content-type", b"application/json"),
        (_SESSION, session.encode("latin-1")),
    ]
    await send({"type": "http.response.start", "status": 202, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


@contextmanager
def _held(transport: StreamableHTTPServerTransport) -> Iterator[None]:
    """Holds the session open while a request is served, as the SDK's transport does.

    ``StreamableHTTPServerTransport.handle_request`` (mcp 2.3, pinned by
    tests/unit/test_http_hotpath.py): the idle countdown stops while any request is in
    flight and restarts when the last one ends.
    """
    idle = transport.idle_scope
    timeout = transport._idle_timeout
    if idle is None or timeout is None:
        yield
        return
    transport._requests_in_flight += 1
    idle.deadline = math.inf
    try:
        yield
    finally:
        transport._requests_in_flight -= 1
        if not transport._requests_in_flight:
            idle.deadline = anyio.current_time() + timeout


def _replay(first: Message, receive: Receive) -> Receive:
    """A ``receive`` that gives ``first`` once, then the real stream's next messages."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if not given:
            given = True
            return first
        return await receive()

    return replayed


class _HttpClient(SdkClient):
    """The ``ClientChannel`` of a hot call: ``SdkClient``'s questions, over the call's stream.

    ``elicit``, ``sample`` and ``list_roots`` are ``SdkClient``'s own (the same SDK requests
    and results); they reach the client through ``_ask``. There is no SDK request context
    here, so ``SdkClient.__init__`` is not run: this sets what its methods read.
    """

    def __init__(self, call: _Call, connection: Connection, hub: ClientHub) -> None:
        self._call = call
        self._connection = connection
        self._hub = hub
        self._modern = False  # the hot path serves 2025-era sessions only
        self._rounds = None
        self.protocol_refusals = False

    def supports(self, feature: Feature) -> bool:
        """Whether the client declared ``feature`` (as ``SdkClient.supports`` reads it)."""
        if feature == "logging":
            return True
        capabilities = self._connection.client_capabilities
        if capabilities is None:
            return False
        if feature == "elicitation":
            found = capabilities.elicitation
            return found is not None and (found.form is not None or found.url is None)
        if feature == "sampling":
            return capabilities.sampling is not None
        return capabilities.roots is not None

    async def log(self, level: LogLevel, data: Any, logger: str) -> None:
        # The level the client set (logging/setLevel, which the SDK answers and the
        # client hub keeps on the connection).
        wanted = self._connection.state.get(_LEVEL_KEY, "debug")
        if LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted):
            return
        params = {"level": level, "logger": logger, "data": data}
        await self._call.notify("notifications/message", params)

    async def _ask(self, request: types.ServerRequest, kind: type[R], key: str | None) -> R:
        return await self._call.ask(request, kind)
