"""mcpfusion's stdio transport: the SDK's server on event-loop pipes, every bad line answered."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from typing import Any, Final

import anyio
import pydantic_core
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp import types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params
from mcp.shared.message import SessionMessage
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from mcpfusion._app.lifespan import settle
from mcpfusion._present.failures import preview
from mcpfusion._serve.hotpath import HotPath, plain_sdk_path
from mcpfusion._serve.jsonrpc import (
    BATCH_VERSIONS,
    INVALID_REQUEST,
    PARSE_ERROR,
    RequestId,
    encode,
    error,
    explain,
    recover_id,
    repeated_key,
    usable_id,
    validated,
)
from mcpfusion._serve.modern import MODERN_ERA, opens_modern
from mcpfusion._serve.sdk import ServableApp, build_server, hub_of, lists_of, tasks_of
from mcpfusion._serve.stdio.lines import (
    DEFAULT_MAX_LINE,
    LineReader,
    LineWriter,
    Oversized,
    claimed_stdio,
    open_lines,
)
from mcpfusion._serve.tool_lists import ToolLists

__all__ = ["EOF_GRACE", "serve", "serve_stdio"]

logger = logging.getLogger("mcpfusion")

EOF_GRACE: Final = 5.0
"""How long the requests read before the end of stdin may take to be answered."""


class _Batch:
    """A batch being answered: its responses are held, then written as one array line."""

    def __init__(self) -> None:
        self.waiting: set[RequestId] = set()
        self.answers: list[bytes] = []
        self.sealed = False  # every member has been read

    @property
    def done(self) -> bool:
        return self.sealed and not self.waiting

    def line(self) -> bytes | None:
        """The array of answers; ``None`` for a batch of notifications, which gets none."""
        return b"[" + b",".join(self.answers) + b"]" if self.answers else None


def _on_asyncio() -> bool:
    """Whether this is asyncio's loop, which the hot path's tasks need (trio's is served too)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _sdk_line(message: types.JSONRPCMessage) -> bytes:
    """The SDK's own serialization of a message it sends, as its stdio transport writes it."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode()
    except pydantic_core.PydanticSerializationError:  # a lone surrogate: see encode()
        return encode(message.model_dump(mode="json", by_alias=True, exclude_unset=True))


class _Session:
    """One client on stdio: lines in, checked, handed to the SDK's server; its answers out."""

    def __init__(
        self,
        server: Server[Any],
        lines: LineReader,
        out: LineWriter,
        app: ServableApp | None,
        *,
        grace: float = EOF_GRACE,
    ) -> None:
        self._server = server
        self._grace = grace
        self._lines = lines
        self._out = out
        self._app = app if app is not None and plain_sdk_path(server) else None
        self._hot: HotPath | None = None
        self._version: str | None = None  # what initialize negotiated, once it answered
        # The era the client's first request handed to the SDK opened (None before it).
        self._modern: bool | None = None
        self._initializing: set[RequestId] = set()
        self._batched: dict[RequestId, _Batch] = {}
        # Requests handed to the SDK and not answered yet, by correlation key: their ids.
        self._unanswered: dict[RequestId, RequestId] = {}
        self._all_answered = anyio.Event()  # set when _unanswered empties (read by _settle)

    async def run(self) -> None:
        """Serves until stdin ends (or stdout goes away)."""
        to_sdk, sdk_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        sdk_writes, from_sdk = anyio.create_memory_object_stream[SessionMessage](0)
        options = self._server.create_initialization_options()
        async with anyio.create_task_group() as group:
            group.start_soon(self._stop_when_lost, group.cancel_scope)
            async with anyio.create_task_group() as serving:
                serving.start_soon(self._server.run, sdk_reads, sdk_writes, options)
                serving.start_soon(self._relay, from_sdk)
                if self._app is not None and _on_asyncio():
                    # The server's own tools/list cache (a server build_server did not make
                    # has none: the hot path lists from the app alone).
                    lists = lists_of(self._server) or ToolLists(self._app)
                    stamp = self._server.server_info_stamp
                    self._hot = HotPath(self._app, self._out, lists, hub_of(self._server), stamp)
                    self._lines.claim = self._claim
                try:
                    async with to_sdk:
                        await self._read(to_sdk)
                        await self._settle()
                finally:
                    if self._hot is not None:
                        await self._hot.aclose()
            group.cancel_scope.cancel()

    async def _settle(self) -> None:
        """Waits, for at most the grace, until every request read has been answered.

        A script piping its requests in ends stdin right behind them: they are answered
        as they would have been, not told "Connection closed" (as the SDK's transport and
        the TypeScript one answer them). Calls still running after the grace are stopped.
        """
        with anyio.move_on_after(self._grace):
            if self._hot is not None:
                await self._hot.settle()
            if self._unanswered:
                self._all_answered = anyio.Event()
                await self._all_answered.wait()

    async def _stop_when_lost(self, scope: anyio.CancelScope) -> None:
        await self._out.lost.wait()
        logger.info("stdio: stdout closed; stopping")
        scope.cancel()

    async def _write(self, line: bytes, *, notice: bool = False) -> None:
        self._out.write(line, notice=notice)
        await self._out.drain()

    async def _refuse(
        self, request_id: RequestId | None, code: int, message: str, batch: _Batch | None = None
    ) -> None:
        answer = encode(error(request_id, code, message))
        if batch is None:
            await self._write(answer)
        else:
            batch.answers.append(answer)

    async def _read(self, to_sdk: ObjectSendStream[SessionMessage | Exception]) -> None:
        while (line := await self._lines.get()) is not None:
            if isinstance(line, Oversized):
                limit = f"{self._lines.max_line:,} bytes"
                await self._refuse(
                    recover_id(line.head), INVALID_REQUEST, f"Invalid Request: over {limit}"
                )
                continue
            try:
                parsed = pydantic_core.from_json(line)
            except ValueError as exc:
                parsed = await self._unparsed(line, exc)
                if parsed is None:
                    continue
            repeated = repeated_key(line, parsed) if isinstance(parsed, dict | list) else None
            if repeated is not None:
                request_id = usable_id(parsed.get("id")) if isinstance(parsed, dict) else None
                reason = f"the key {preview(repeated)} appears twice in one object"
                await self._refuse(request_id, INVALID_REQUEST, f"Invalid Request: {reason}")
                continue
            if isinstance(parsed, dict):
                if self._hot is not None and parsed.get("method") in _CLIENT_SETUP:
                    self._hot_client_setup(parsed)
                if self._taken(parsed):
                    continue
                await self._message(parsed, to_sdk)
            elif isinstance(parsed, list):
                await self._batch(parsed, to_sdk)
            else:
                await self._refuse(None, INVALID_REQUEST, f"Invalid Request: {explain(parsed)}")

    def _claim(self, line: bytes) -> bool:
        """Answers a hot line as it arrives, when ``_read`` would take it next anyway.

        ``_read``'s steps for the lines the hot path takes (a line that parses, repeats no
        key, and ``_taken``); any other line is left to ``_read``. Handled in the pipe's
        callback, the call starts a loop iteration sooner and the reader is not woken for
        it: line in to call started 110-160 -> 78-81 µs p50 (benchmarks/stdio.py load, 2
        busy cores).
        """
        if self._hot is None:
            return False
        try:
            parsed = pydantic_core.from_json(line)
        except ValueError:
            return False
        return (
            type(parsed) is dict
            and parsed.get("method") in _HOT_METHODS
            and repeated_key(line, parsed) is None
            and self._taken(parsed)
        )

    def _taken(self, message: dict[str, Any]) -> bool:
        """Whether the hot path answered ``message`` (the one rule of ``_read`` and ``_claim``).

        Once the session is open: at the version ``initialize`` negotiated, or in the
        2026-07-28 era its first request opened.
        """
        hot = self._hot
        version = MODERN_ERA if self._modern else self._version
        return hot is not None and version is not None and hot.take(message, version)

    async def _unparsed(self, line: bytes, exc: ValueError) -> Any:
        """What a line the fast parse refused is after all, or ``None`` once answered.

        Invalid UTF-8 is read as U+FFFD, as the SDK's transport reads it; a blank line is
        skipped. Anything else gets a parse error naming the top-level id, when there is
        one: the parser's message gives a reason and a position, never the input.
        """
        if not line.strip():
            return None
        try:
            line.decode()
        except UnicodeDecodeError:
            try:
                return pydantic_core.from_json(line.decode(errors="replace"))
            except ValueError as retry:
                exc = retry
        await self._refuse(recover_id(line), PARSE_ERROR, f"Parse error: {exc}")
        return None

    async def _message(
        self,
        obj: dict[str, Any],
        to_sdk: ObjectSendStream[SessionMessage | Exception],
        batch: _Batch | None = None,
    ) -> None:
        message = validated(obj)
        if isinstance(message, tuple):
            request_id, reason = message
            await self._refuse(request_id, INVALID_REQUEST, f"Invalid Request: {reason}", batch)
            return
        if isinstance(message, types.JSONRPCRequest):
            if self._modern is None:  # the first request the SDK gets decides, as it does
                self._modern = opens_modern(message.method, message.params)
            key = coerce_request_id(message.id)
            self._unanswered[key] = message.id
            if message.method == "initialize":
                self._initializing.add(key)
            if batch is not None:
                batch.waiting.add(key)
                self._batched[key] = batch
        elif (
            isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
        ):
            self._cancelled(cancelled_request_id_from_params(message.params))
        await to_sdk.send(SessionMessage(message))

    def _cancelled(self, request_id: RequestId | None) -> None:
        """Stops the hot call the client cancelled, or the wait for a batch member's answer.

        The notification still goes on to the SDK, which cancels its own call by that id.
        """
        if request_id is None:
            return
        if self._hot is not None:
            self._hot.cancel(request_id)
        key = coerce_request_id(request_id)
        self._unanswered.pop(key, None)
        if not self._unanswered:
            self._all_answered.set()
        batch = self._batched.pop(key, None)
        if batch is not None:
            batch.waiting.discard(key)
            self._flush(batch)

    async def _batch(
        self, members: list[Any], to_sdk: ObjectSendStream[SessionMessage | Exception]
    ) -> None:
        if not members:
            await self._refuse(None, INVALID_REQUEST, "Invalid Request: an empty batch")
            return
        if self._version not in BATCH_VERSIONS:
            await self._refuse_batch(members)
            return
        batch = _Batch()
        for member in members:
            if isinstance(member, dict):
                await self._message(member, to_sdk, batch)
            else:
                reason = explain(member)
                await self._refuse(None, INVALID_REQUEST, f"Invalid Request: {reason}", batch)
        batch.sealed = True
        self._flush(batch)

    async def _refuse_batch(self, members: list[Any]) -> None:
        """Answers every request of a batch this session cannot take with an error."""
        version = self._version or "none negotiated yet"
        message = f"Invalid Request: no batches at protocol version {version}"
        ids = [
            request_id
            for member in members
            if isinstance(member, dict)
            and "method" in member
            and (request_id := usable_id(member.get("id"))) is not None
        ]
        if not ids:
            await self._refuse(None, INVALID_REQUEST, message)
            return
        batch = _Batch()
        for request_id in ids:
            await self._refuse(request_id, INVALID_REQUEST, message, batch)
        batch.sealed = True
        self._flush(batch)

    def _flush(self, batch: _Batch) -> None:
        if batch.done and (line := batch.line()) is not None:
            self._out.write(line)

    async def _relay(self, from_sdk: ObjectReceiveStream[SessionMessage]) -> None:
        """Writes what the SDK sends, one line each, holding the answers to a batch."""
        async with from_sdk:
            async for item in from_sdk:
                message = item.message
                if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
                    key = coerce_request_id(message.id) if message.id is not None else None
                    batch = None
                    if key is not None:
                        self._unanswered.pop(key, None)
                        batch = self._batched.pop(key, None)
                        if not self._unanswered:
                            self._all_answered.set()
                    if key in self._initializing:
                        self._initializing.discard(key)
                        self._negotiated(message)
                    if batch is not None:
                        batch.waiting.discard(key)
                        batch.answers.append(_sdk_line(message))
                        self._flush(batch)
                        continue
                notice = isinstance(message, types.JSONRPCNotification)
                await self._write(_sdk_line(message), notice=notice)
        self._answer_the_rest()

    def _answer_the_rest(self) -> None:
        """Once the SDK has stopped, answers each request it left unanswered, and the batches.

        The SDK answers a call cut short by the end of stdin with "Connection closed", but
        not one whose task had not started yet; a client waiting for it is told the same.
        """
        batches = {id(batch): batch for batch in self._batched.values()}
        for key, request_id in self._unanswered.items():
            closed = encode(error(request_id, types.CONNECTION_CLOSED, "Connection closed"))
            batch = self._batched.get(key)
            if batch is None:
                self._out.write(closed)
            else:
                batch.answers.append(closed)
        self._unanswered.clear()
        self._batched.clear()
        for batch in batches.values():
            batch.waiting.clear()
            self._flush(batch)

    def _hot_client_setup(self, message: dict[str, Any]) -> None:
        """What the hot path must know of the client: its level, its name (for its schema
        dialect), and whether it can be asked.

        A client that declares elicitation, sampling or roots is served by the SDK alone,
        which can ask it mid-call; the SDK still answers these messages.
        """
        params = message.get("params")
        if not isinstance(params, dict) or self._hot is None:
            return
        if message.get("method") == "logging/setLevel":
            self._hot.set_level(params.get("level"))
            return
        capabilities = params.get("capabilities")
        if isinstance(capabilities, dict) and capabilities.keys() & _ASKABLE:
            self._hot = None  # no call was taken yet: initialize comes first
            return
        info = params.get("clientInfo")
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            self._hot.set_client(info["name"])  # its tools/list is in the client's dialect

    def _negotiated(self, message: types.JSONRPCResponse | types.JSONRPCError) -> None:
        """Learns the protocol version from the SDK's answer to ``initialize``."""
        if isinstance(message, types.JSONRPCResponse):
            version = message.result.get("protocolVersion")
            if version in HANDSHAKE_PROTOCOL_VERSIONS:
                self._version = version


_CLIENT_SETUP: Final = frozenset({"initialize", "logging/setLevel"})
_HOT_METHODS: Final = frozenset({"tools/call", "tools/list"})
_ASKABLE: Final = frozenset({"elicitation", "sampling", "roots"})


async def serve(
    server: Server[Any], *, app: ServableApp | None = None, max_line: int = DEFAULT_MAX_LINE
) -> None:
    """Serves ``server`` over this process's stdin and stdout until stdin closes.

    One JSON-RPC message per line, UTF-8. While serving, fd 0 reads the null device and
    fd 1 writes to stderr, so a stray ``print`` cannot corrupt the protocol stream. Every
    line with a usable id gets an answer: a line that is not JSON a parse error (-32700),
    a message that is not JSON-RPC an invalid-request error (-32600), both with that id,
    else with ``null``. A line over ``max_line`` bytes is refused (-32600) without being
    held in memory. A session that negotiated 2025-03-26 may send JSON-RPC batches. When
    stdin ends, the requests read are answered before it returns; those still running
    ``EOF_GRACE`` seconds later are stopped and answered -32000 "Connection closed".

    Args:
        server: the SDK server; it answers everything the hot path does not.
        app: the app ``server`` was built from by ``build_server`` (unchanged since).
            Given, ``tools/call`` and ``tools/list`` of an initialized session are answered
            without the SDK's per-message models, with the same bytes.
        max_line: the longest line read.

    On Windows, whose pipes the event loop cannot serve this way, it is the SDK's own
    transport, as before (and none of the above beyond the framing).
    """
    tasks = tasks_of(server)
    # Tasks outlive their requests: their calls run as long as the session serves.
    async with tasks.running() if tasks is not None else contextlib.nullcontext():
        if sys.platform == "win32":
            async with stdio_server() as (read_stream, write_stream):
                options = server.create_initialization_options()
                await server.run(read_stream, write_stream, options)
            return
        with claimed_stdio() as (in_fd, out_fd):
            async with open_lines(in_fd, out_fd, max_line=max_line) as (lines, out):
                settle()
                await _Session(server, lines, out, app).run()


async def serve_stdio(app: ServableApp) -> None:
    """Serves ``app`` over this process's stdin and stdout until stdin closes."""
    await serve(build_server(app), app=app)
