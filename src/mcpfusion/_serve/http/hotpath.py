"""The HTTP hot path: a session's ``tools/call`` and ``tools/list`` answered before the SDK.

An ASGI app in front of the SDK's session manager. A POST carrying one such request of an
initialized 2025-era session is answered here, with one JSON body when the handler sends
nothing else, or with an SSE stream from the first message it sends to the client on (see
``_http_call``); a 2026-07-28 ``tools/call`` POST, which has no session, is answered by
``ModernCalls``; every other request goes to the SDK unchanged. Why that is the SDK's
behaviour: docs/deployment.md, "The HTTP hot path".
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any, Final

from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult
from mcp.server.streamable_http import StreamableHTTPServerTransport, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.shared.dispatcher import coerce_request_id
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from mcpfusion._serve.call import Running
from mcpfusion._serve.hotpath import (
    CALL_KEYS,
    call_shape,
    plain_sdk_path,
    result_line,
    tasked_names,
)
from mcpfusion._serve.http.bearer import identity_of
from mcpfusion._serve.http.call import (
    SESSION_HEADER,
    Asks,
    HttpCall,
    HttpClient,
    accepted,
    json_answer,
)
from mcpfusion._serve.http.guard import MESSAGE
from mcpfusion._serve.http.modern import ModernCalls
from mcpfusion._serve.http.streams import SessionManager
from mcpfusion._serve.jsonrpc import RequestId
from mcpfusion._serve.protocol import ServableApp
from mcpfusion._serve.results import respond
from mcpfusion._serve.sdk import lists_of
from mcpfusion._serve.sdk_client import ClientHub
from mcpfusion._serve.sdk_private import connection_of, hold_open, owners, transports
from mcpfusion._serve.tool_lists import ToolLists

__all__ = ["HotEndpoint"]

_HOT_METHODS: Final = frozenset({"tools/call", "tools/list"})
_METHODS: Final = frozenset({"POST", "DELETE"})
_VERSION: Final = b"mcp-protocol-version"
_ANSWER_KEYS: Final = frozenset({"jsonrpc", "id", "result", "error"})


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
        connection = connection_of(ctx.session)
        if connection is not None and connection.session_id is not None:
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
        self._lists: ToolLists | None = lists_of(server)
        plain = plain_sdk_path(server)  # read before the middleware below joins it
        self.enabled = (
            not manager.stateless
            and not manager.json_response
            and manager.event_store is None
            and plain
            and hub is not None
            and self._lists is not None
        )
        if self.enabled:
            server.middleware.append(self._connections)
        # 2026-07-28 has no session: the SDK serves its POSTs alone whether the server is
        # stateless, answers JSON or keeps events, so only its own middleware turns this off.
        self.modern: ModernCalls | None = None
        if plain and server.get_tool_input_schema is not None:
            self.modern = ModernCalls(app, server, hub, manager.json_response)
        self._calls: Running[tuple[str, RequestId], HttpCall] = Running()  # by session and id
        self._asks: Asks = {}  # questions to clients awaiting their answers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _METHODS:
            await self._sdk(scope, receive, send)
            return
        session_id = version = None
        for name, value in scope["headers"]:
            if name == SESSION_HEADER:
                session_id = value.decode("latin-1")
            elif name == _VERSION:
                version = value.decode("latin-1")
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            # The SDK's manager sends such a request to its single exchange, session or not.
            message = scope.get(MESSAGE)
            if (
                self.modern is not None
                and scope["method"] == "POST"
                and isinstance(message, dict)
                and await self.modern.take(scope, receive, send, message)
            ):
                return
            await self._sdk(scope, receive, send)
            return
        if not self.enabled or session_id is None:  # initialize, or a request the SDK refuses
            await self._sdk(scope, receive, send)
            return
        if scope["method"] == "DELETE":
            await self._sdk(scope, receive, send)
            self._ended(session_id)
            return
        # The guard in front parsed and validated the body: its message, not parsed again.
        message = scope.get(MESSAGE)
        if isinstance(message, dict):
            method = message.get("method")
            if method in _HOT_METHODS and "id" in message:
                if await self._take(scope, send, session_id, version, message):
                    return
            elif method == "notifications/cancelled" and self._calls:
                self._cancel(scope, session_id, message)
            elif method is None and self._asks and self._answered(scope, session_id, message):
                await accepted(send, session_id)
                return
        await self._sdk(scope, receive, send)

    # -- whether the SDK would serve this request of this session as the hot path does ----

    def _transport(self, scope: Scope, session_id: str) -> StreamableHTTPServerTransport | None:
        """The session's transport if the SDK would hand it the request (as its manager does)."""
        manager = self._manager
        transport = transports(manager).get(session_id)
        if transport is None or transport.is_terminated:
            return None
        user = scope.get("user")
        requestor = authorization_context(user) if isinstance(user, AuthenticatedUser) else None
        if requestor != owners(manager).get(session_id):
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
        if not message.keys() <= CALL_KEYS or message.get("jsonrpc") != "2.0":
            return False
        request_id = message["id"]
        if type(request_id) is not int and type(request_id) is not str:
            return False
        params = message.get("params", {})
        shape: tuple[Any, ...] | None = None
        if message["method"] == "tools/call":
            shape = call_shape(params)
            if shape is None or shape[0] in tasked_names(self._app):
                return False
        elif not (params is None or params == {}) or self._app.toggled:
            return False  # a cursor, or a tool list changed at run time: the SDK lists
        transport = self._transport(scope, session_id)
        if transport is None:
            return False
        connection = self._connection(scope, session_id, version)
        if connection is None:
            return False
        with hold_open(transport):
            if shape is None:
                assert self._lists is not None  # enabled only with them
                caller = identity_of(scope)
                params = connection.client_params
                client = params.client_info.name if params is not None else None
                body = self._lists.line(request_id, caller, connection.protocol_version, client)
                await json_answer(send, session_id, body)
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
        call = HttpCall(send, session_id, self._asks, connection.protocol_version)
        key = (session_id, coerce_request_id(request_id))
        # Registered before the handler starts: a cancellation right behind it finds it.
        self._calls.add(key, call)
        assert self._hub is not None  # enabled only with one
        client = HttpClient(call, connection, self._hub)
        with call.scope:
            try:
                setup = connection.client_params
                response = await respond(
                    self._app,
                    name,
                    arguments,
                    meta,
                    call.reporter(token),
                    identity_of(scope),
                    client,
                    setup.client_info.name if setup is not None else None,
                )
            finally:
                self._calls.done(key, call)
            # No await since the handler returned: a cancellation cannot slip in between.
            if not call.cancelled:
                await call.answer(result_line(request_id, response, connection.protocol_version))
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
        self._calls.cancel((session_id, coerce_request_id(request_id)))

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
        if session_id in transports(self._manager):
            return  # refused, or not that session's credential
        for key, _ in self._calls.items():
            if key[0] == session_id:
                self._calls.cancel(key)
