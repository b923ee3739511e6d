"""An in-process stdio session for the unit tests: lines fed in, lines read back."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pydantic_core
from mcp.server import Server

from mcpfusion._serve.sdk import build_server
from mcpfusion._serve.stdio.lines import LineReader
from mcpfusion._serve.stdio.session import EOF_GRACE, _Session

MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
"""The ``_meta`` envelope the official client sends with every 2026-07-28 request."""


def enveloped(message: dict[str, Any], **meta: Any) -> dict[str, Any]:
    """``message`` with the 2026-07-28 envelope (and ``meta``) in its params' ``_meta``."""
    params = dict(message.get("params") or {})
    params["_meta"] = {**ENVELOPE, **(params.get("_meta") or {}), **meta}
    return {**message, "params": params}


class Wire:
    """A stdout stand-in: every line written, read back one by one."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.notices: set[int] = set()  # indices of the lines written as notifications
        self.lost = anyio.Event()
        self._read = 0
        self._more = anyio.Event()

    def write(self, line: bytes, *, notice: bool = False) -> None:
        """Keeps ``line``, and which lines were notifications."""
        self.lines.append(line)
        if notice:
            self.notices.add(len(self.lines) - 1)
        self._more.set()

    async def drain(self) -> None:
        """Never full; a checkpoint, as a real drain may be."""
        await anyio.lowlevel.checkpoint()

    async def next_line(self) -> bytes:
        """The next line written, once there is one."""
        while self._read >= len(self.lines):
            self._more = anyio.Event()
            await self._more.wait()
        self._read += 1
        return self.lines[self._read - 1]


class Peer:
    """The client's end of an in-process session."""

    def __init__(self, lines: LineReader, wire: Wire) -> None:
        self.lines = lines
        self.wire = wire

    def send(self, message: Any) -> None:
        """Sends a message (bytes go as they are), one line."""
        raw = message if isinstance(message, bytes) else pydantic_core.to_json(message)
        self.lines.feed(raw + b"\n")

    async def receive(self) -> Any:
        """The next message the server wrote, parsed."""
        return json.loads(await self.wire.next_line())

    async def until(self, request_id: Any) -> list[bytes]:
        """Every line written up to and including the answer to ``request_id``."""
        written = []
        while True:
            line = await self.wire.next_line()
            written.append(line)
            message = json.loads(line)
            answered = isinstance(message, dict) and "method" not in message
            if answered and message.get("id") == request_id:
                return written

    async def request(self, method: str, params: Any = None, request_id: Any = 1) -> Any:
        """Sends a request and returns its answer, parsed."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return json.loads((await self.until(request_id))[-1])

    async def initialize(self, version: str = "2025-11-25") -> None:
        """The handshake, as a client opens a session."""
        params = {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        }
        answer = await self.request("initialize", params, "init")
        assert answer["result"]["protocolVersion"] == version
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def discover(self) -> None:
        """Opens the session at 2026-07-28, as the official client does: no handshake."""
        discover = {"jsonrpc": "2.0", "id": "discover", "method": "server/discover"}
        answer = await self.request("server/discover", enveloped(discover)["params"], "discover")
        assert MODERN in answer["result"]["supportedVersions"]


@asynccontextmanager
async def session(
    app: Any,
    *,
    hot: bool = True,
    server: Server[Any] | None = None,
    max_line: int = 1 << 20,
    grace: float = EOF_GRACE,
) -> AsyncIterator[Peer]:
    """A session of ``app`` in this process, fed and read through ``Peer``; ends at exit,
    waiting at most ``grace`` for the answers still due."""
    lines, wire = LineReader(max_line), Wire()
    served = _Session(server or build_server(app), lines, wire, app if hot else None, grace=grace)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(served.run)
            try:
                yield Peer(lines, wire)
            finally:
                lines.feed_eof()


def call(request_id: Any, name: Any, arguments: Any = None, **params: Any) -> dict[str, Any]:
    """A ``tools/call`` request."""
    body: dict[str, Any] = {"name": name, **params}
    if arguments is not None:
        body["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": body}


async def exchange(
    app: Any, messages: list[dict[str, Any]], *, hot: bool, version: str = "2025-11-25"
) -> list[bytes]:
    """Every line a session writes for ``messages``, each sent once the last is answered.

    At 2026-07-28 the session is opened as the official client opens it: ``server/discover``
    with the envelope, no handshake.
    """
    async with session(app, hot=hot) as peer:
        await (peer.discover() if version == MODERN else peer.initialize(version))
        written = []
        for message in messages:
            peer.send(message)
            written += await peer.until(message["id"])
    return written


class Stub:
    """An app whose one tool returns (or raises) what it is given."""

    name = "stub"
    version = "1.0.0"
    instructions = None

    def __init__(self, outcome: Any, *, stubborn: bool = False) -> None:
        self.outcome = outcome
        self.stubborn = stubborn  # swallows its cancellation and answers anyway
        self.started = anyio.Event()
        self.cancelled = anyio.Event()
        self.release = anyio.Event()
        self.metas: list[Any] = []

    local_identity = None

    def list_tools(
        self, scopes: Any = None, *, tenant: Any = None, dialect: Any = None
    ) -> list[dict[str, Any]]:
        """One tool taking anything."""
        return [{"name": "t", "inputSchema": {"type": "object"}}]

    def dialect_for(self, client: Any) -> Any:
        """Every client reads MCP's JSON Schema."""
        return "mcp"

    def sends_user_ui(self, client: Any) -> bool:
        """Every client gets every block."""
        return True

    def scope_key(self, identity: Any) -> None:
        """Every caller sees everything."""
        return None

    def running(self) -> Any:
        """No lifespan."""
        return contextlib.nullcontext()

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: Any = None,
        meta: Mapping[str, Any] | None = None,
        identity: Any = None,
        client: Any = None,
    ) -> Any:
        """The outcome; with ``{"wait": true}`` only once released (or cancelled)."""
        self.metas.append(meta)
        if arguments and arguments.get("wait"):
            self.started.set()
            try:
                await self.release.wait()
            except anyio.get_cancelled_exc_class():
                self.cancelled.set()
                if not self.stubborn:
                    raise
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome
