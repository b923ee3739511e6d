"""The stdio hot path: ``tools/call`` and ``tools/list`` answered without the SDK's models."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, Final

import anyio
import pydantic_core
from mcp import types
from mcp.server import Server
from mcp.server.request_state import RequestStateBoundary
from mcp.shared.dispatcher import coerce_request_id
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from opentelemetry import trace

from mcpfusion._present.response import ToolResponse
from mcpfusion._serve.call import HotCall, Running
from mcpfusion._serve.channel import Channel, R
from mcpfusion._serve.jsonrpc import RequestId, encode, error
from mcpfusion._serve.modern import (
    MODERN_ERA,
    TAKEN_META,
    Envelopes,
    ModernClient,
    client_name_of,
    lacking,
)
from mcpfusion._serve.protocol import ServableApp
from mcpfusion._serve.results import respond, sent_result
from mcpfusion._serve.sdk_client import ClientHub, ConnectionTracker
from mcpfusion._serve.stdio.lines import LineWriter
from mcpfusion._serve.tool_lists import ToolLists
from mcpfusion._tools.client import (
    LOG_LEVELS,
    ClientLacks,
    Feature,
    LogLevel,
)

__all__ = [
    "CALL_KEYS",
    "INVALID_RESULT",
    "HotPath",
    "call_shape",
    "modern_call_shape",
    "plain_sdk_path",
    "result_line",
    "tasked_names",
]

logger = logging.getLogger("mcpfusion")

CALL_KEYS: Final = frozenset({"jsonrpc", "id", "method", "params"})
_CALL_PARAMS: Final = frozenset({"name", "arguments", "_meta"})
_PROGRESS_ONLY: Final = frozenset({"progressToken"})
INVALID_RESULT: Final = "Handler returned an invalid result"
_STOP_TIMEOUT: Final = 5.0
"""How long the calls still running when stdin ends may take to stop."""


class _Call(HotCall):
    """A ``tools/call`` the stdio hot path runs, in an asyncio task of its own.

    It is stopped by cancelling that task, not through an anyio cancel scope: making and
    entering one per call cost 8 % of a stdio server's time at 10 calls in flight
    (``benchmarks/stdio.py``, py-spy). Its notifications are lines on stdout.
    """

    __slots__ = ("_out", "started", "stopped", "task")

    def __init__(self, version: str, out: LineWriter) -> None:
        super().__init__(version)
        self._out = out
        self.task: asyncio.Task[None] | None = None
        self.started = False  # its task runs: a cancellation reaches its handler
        self.stopped = False  # by the server, stdin having ended: the client is told so

    def stop(self) -> None:
        """Cancels the task once it runs; one that has not started sees the flags first."""
        if self.started and self.task is not None:
            self.task.cancel()

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Writes the notification as a line of its own (a notice: see ``LineWriter``)."""
        self._out.write(encode({"jsonrpc": "2.0", "method": method, "params": params}), notice=True)
        await self._out.drain()


_OURS: Final = (RequestStateBoundary, ConnectionTracker)
"""Middleware ``build_server`` adds that changes nothing the hot path answers: the
connection tracker only notes the connection (for list-change notices; stdio has one)."""


def tasked_names(app: ServableApp) -> frozenset[str]:
    """The tool names whose calls may run as MCP tasks: the SDK's path answers them
    (it decides per call, from the action and the client, whether a task is made)."""
    tasked = getattr(app, "tasked_tools", None)
    return tasked() if callable(tasked) else frozenset()


def plain_sdk_path(server: Server[Any]) -> bool:
    """Whether the SDK answers a tool call with its handler alone, so a hot path may too.

    Not when the server has middleware of its own, cache hints, or when OpenTelemetry
    has a tracer provider: spans of the SDK's default middleware would then be collected,
    and the hot path emits none.
    """
    defaults = [type(m) for m in Server("default").middleware]
    # The request-state boundary acts only on requestState, which no call the hot path
    # takes carries (and input_required results belong to 2026-07-28, which it never serves).
    own = [type(m) for m in server.middleware if not isinstance(m, _OURS)]
    return (
        own == defaults
        and not server.cache_hints
        and isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    )


class HotPath:
    """``tools/call`` and ``tools/list`` of an initialized session, answered without the SDK.

    Only requests the SDK would take exactly as they are (see ``take``); it runs the app's
    ``call_tool`` as ``build_server``'s handler does and writes the bytes the SDK would.
    Why that is the same behaviour: docs/deployment.md, "The stdio hot path".

    Args:
        server_info: the server's ``server_info_stamp``, which the SDK writes into every
            2026-07-28 result.
    """

    def __init__(
        self,
        app: ServableApp,
        out: LineWriter,
        lists: ToolLists,
        hub: ClientHub | None = None,
        server_info: Mapping[str, Any] | None = None,
    ) -> None:
        self._app = app
        self._out = out
        self._client = _HotClient(out, hub)
        self._modern_client = ModernClient(hub)
        self._envelopes = Envelopes()
        self._server_info = server_info
        self._loop = asyncio.get_running_loop()
        self._running: Running[RequestId, _Call] = Running()  # by id, until the handler returns
        self._tasks: dict[asyncio.Task[None], _Call] = {}  # until the answer has left
        self._lists = lists
        self._version = ""  # the session's protocol version, set by the first message taken
        # Over stdio the caller is the process owner: the app's local identity, whose
        # scopes decide what it sees (as build_server's caller() says).
        self._identity = app.local_identity
        self._client_name: str | None = None  # from initialize's clientInfo, if sent

    def take(self, message: dict[str, Any], version: str) -> bool:
        """Answers ``message`` if it is a request this path serves as the SDK would.

        ``version`` is the session's negotiated one, or ``MODERN_ERA`` for a session its
        first request opened at 2026-07-28 (each request then names its own).
        """
        if not message.keys() <= CALL_KEYS or message.get("jsonrpc") != "2.0":
            return False
        request_id = message.get("id")
        if type(request_id) is not int and type(request_id) is not str:
            return False  # bool, float and null ids are the SDK's (or the refusal's) to answer
        method = message.get("method")
        params = message.get("params", {})
        if version == MODERN_ERA:
            # Only tools/call: a 2026 tools/list carries cache hints the SDK's path adds.
            if method == "tools/call":
                modern = modern_call_shape(params, self._envelopes)
                if modern is not None and modern[0] not in tasked_names(self._app):
                    name, arguments, meta, token, request_version = modern
                    return self._call(
                        request_id, name, arguments, meta, token, version=request_version
                    )
            return False
        self._version = version  # the session's: the same for every message
        if method == "tools/call" and (shape := call_shape(params)) is not None:
            if shape[0] in tasked_names(self._app):
                return False
            return self._call(request_id, *shape)
        if method == "tools/list" and (params is None or params == {}) and not self._changes():
            self._out.write(
                self._lists.line(request_id, self._identity, version, self._client_name)
            )
            return True
        return False

    def _call(
        self,
        request_id: RequestId,
        name: str,
        arguments: dict[str, Any] | None,
        meta: Mapping[str, Any] | None,
        token: str | int | None,
        *,
        version: str | None = None,
    ) -> bool:
        call = _Call(version or self._version, self._out)
        # Registered before the next line is read, so a cancellation right behind it finds it.
        self._running.add(coerce_request_id(request_id), call)
        # A plain asyncio task, not a task-group child: the call starts 13-15 µs sooner
        # (spawn to start, measured: 29-32 µs with anyio's start_soon, 17 µs this way).
        task = self._loop.create_task(self._run(request_id, name, arguments, meta, token, call))
        call.task = task
        self._tasks[task] = call
        task.add_done_callback(self._finished)
        return True

    def _finished(self, task: asyncio.Task[None]) -> None:
        del self._tasks[task]
        if not task.cancelled() and (exc := task.exception()) is not None:
            logger.error("stdio: a tool call task failed", exc_info=exc)

    async def settle(self) -> None:
        """Returns once every call taken has been answered (or cancelled by the client)."""
        while self._tasks:
            await asyncio.wait(list(self._tasks))

    async def aclose(self) -> None:
        """Stops the calls still running, as the SDK does when stdin ends, and waits for them.

        Each is answered with the SDK's "Connection closed" error unless its answer left.
        """
        for call in self._tasks.values():
            call.stopped = True
            call.stop()
        with anyio.CancelScope(shield=True), anyio.move_on_after(_STOP_TIMEOUT):
            while self._tasks:
                await asyncio.wait(list(self._tasks))

    def _changes(self) -> bool:
        """Whether the app's tool list changed at run time: the SDK then lists the tools."""
        return self._app.toggled

    def set_client(self, name: str) -> None:
        """Notes the client's ``clientInfo.name``: its ``tools/list`` is in its dialect."""
        self._client_name = name

    def set_level(self, level: object) -> None:
        """Notes the level of a ``logging/setLevel`` the SDK answers (it is the client's)."""
        if level in LOG_LEVELS:
            self._client.level = level

    def cancel(self, request_id: RequestId) -> None:
        """Stops a running call the client cancelled; nothing is sent for it."""
        self._running.cancel(coerce_request_id(request_id))

    async def _run(
        self,
        request_id: RequestId,
        name: str,
        arguments: dict[str, Any] | None,
        meta: Mapping[str, Any] | None,
        token: str | int | None,
        call: _Call,
    ) -> None:
        answered = False
        call.started = True
        response: ToolResponse | ClientLacks
        try:
            try:
                if call.cancelled or call.stopped:  # before its task first ran
                    return
                modern = call.version in MODERN_PROTOCOL_VERSIONS
                client = self._modern_client if modern else self._client
                response = await respond(
                    self._app,
                    name,
                    arguments,
                    meta,
                    call.reporter(token),
                    self._identity,
                    client,
                    client_name_of(meta) if modern else self._client_name,
                )
            except ClientLacks as lack:  # 2026-07-28 refuses it, as the SDK's path does
                response = lack
            finally:
                self._running.done(coerce_request_id(request_id), call)
            # No await since the handler returned: a cancellation cannot slip in between.
            if not call.cancelled:
                answered = True
                if isinstance(response, ClientLacks):
                    self._out.write(lacking(request_id, response))
                else:
                    line = result_line(request_id, response, call.version, self._server_info)
                    self._out.write(line)
                await self._out.drain()
        except asyncio.CancelledError:
            if not (call.cancelled or call.stopped):
                raise  # not this path's own: the loop is going down
        finally:
            if call.stopped and not answered and not call.cancelled:
                closed = error(request_id, types.CONNECTION_CLOSED, "Connection closed")
                self._out.write(encode(closed))


def call_shape(
    params: Any,
) -> tuple[str, dict[str, Any] | None, Mapping[str, Any] | None, str | int | None] | None:
    """``(name, arguments, meta, token)`` of 2025 ``tools/call`` params a hot path answers
    as the SDK would, else ``None`` (the SDK's to answer).

    Only ``name``, ``arguments`` (an object or null) and ``_meta`` (null, or at most a
    string or integer ``progressToken``): an envelope or a trace context is the SDK's.
    """
    parts = _call_parts(params, _PROGRESS_ONLY)
    if parts is None:
        return None
    name, arguments, raw, token = parts
    return name, arguments, _sdk_meta(raw), token


def modern_call_shape(
    params: Any, envelopes: Envelopes
) -> tuple[str, dict[str, Any] | None, Mapping[str, Any] | None, str | int | None, str] | None:
    """``(name, arguments, meta, token, version)`` of 2026-07-28 ``tools/call`` params a
    hot path answers as the SDK would, else ``None``.

    The same params as ``call_shape`` takes, with an envelope in ``_meta`` that
    ``envelopes`` finds the SDK serves as it is (``_serve/modern.py``).
    """
    parts = _call_parts(params, TAKEN_META)
    if parts is None:
        return None
    name, arguments, raw, token = parts
    version = None if raw is None else envelopes.version_of(raw)
    if version is None:
        return None
    return name, arguments, _sdk_meta(raw), token, version


def _call_parts(
    params: Any, meta_keys: frozenset[str]
) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None, str | int | None] | None:
    """``(name, arguments, raw _meta, token)`` of plain ``tools/call`` params whose
    ``_meta`` holds ``meta_keys`` at most, else ``None``."""
    if type(params) is not dict or not params.keys() <= _CALL_PARAMS:
        return None
    name = params.get("name")
    arguments = params.get("arguments")
    if type(name) is not str or not (arguments is None or type(arguments) is dict):
        return None
    raw = params.get("_meta")
    token = None
    if raw is not None:
        if type(raw) is not dict or not raw.keys() <= meta_keys:
            return None
        if "progressToken" in raw:
            token = raw["progressToken"]
            if type(token) is not int and type(token) is not str:
                return None
    return name, arguments, raw, token


def _sdk_meta(raw: dict[str, Any] | None) -> Mapping[str, Any] | None:
    """The SDK's validated view of ``_meta``, as its handler receives it (or ``None``)."""
    if raw is None:
        return None
    meta: Mapping[str, Any] | None = types.RequestParams.model_validate(
        {"_meta": raw}, by_name=False
    ).meta
    return meta


def result_line(
    request_id: RequestId,
    response: ToolResponse,
    version: str,
    server_info: Mapping[str, Any] | None = None,
) -> bytes:
    """The SDK's line for ``response`` at protocol ``version``: same keys, same order
    (``server_info`` is the server's stamp, which 2026-07-28 results carry)."""
    try:
        result = sent_result(response, version, server_info)
    except ValueError:  # pydantic's ValidationError, answered as the SDK's runner does
        logger.exception("handler for 'tools/call' returned an invalid result")
        return encode(error(request_id, types.INTERNAL_ERROR, INVALID_RESULT))
    try:
        return encode({"jsonrpc": "2.0", "id": request_id, "result": result})
    except (pydantic_core.PydanticSerializationError, ValueError, TypeError) as exc:
        # The SDK's dispatcher answers a result it cannot serialize with code 0 and the text.
        logger.exception("handler for 'tools/call' raised")
        return encode(error(request_id, 0, str(exc)))


class _HotClient(Channel):
    """The client as the hot path serves it: one that logs and subscribes, and asks nothing.

    The stdio session leaves the hot path off for a client that declared elicitation,
    sampling or roots, so a handler asking it finds no such client, as it should.
    """

    def __init__(self, out: LineWriter, hub: ClientHub | None) -> None:
        super().__init__(hub)
        self._out = out
        self.level: LogLevel = "debug"

    def supports(self, feature: Feature) -> bool:
        return feature == "logging"

    async def log(self, level: LogLevel, data: Any, logger: str) -> None:
        if LOG_LEVELS.index(level) < LOG_LEVELS.index(self.level):
            return
        params = {"level": level, "logger": logger, "data": data}
        message = {"jsonrpc": "2.0", "method": "notifications/message", "params": params}
        self._out.write(encode(message), notice=True)
        await self._out.drain()

    async def _ask(self, request: types.ServerRequest, kind: type[R], key: str | None) -> R:
        raise AssertionError("the hot path serves no client that can be asked")
