"""The HTTP hot path at 2026-07-28: when it is on, the SDK's Mcp-Param check, its ping interval."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp.server import _streamable_http_modern
from starlette.types import Message

from mcpfusion import Fusion
from mcpfusion._serve.http.guard import MESSAGE
from mcpfusion._serve.http.hotpath import HotEndpoint
from mcpfusion._serve.http.modern import PING_INTERVAL, ModernCalls, ascii_json
from mcpfusion._serve.http.streams import SessionManager
from mcpfusion._serve.jsonrpc import RequestId
from mcpfusion._serve.sdk import build_server, hub_of

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
DECLARING = {
    "type": "object",
    "properties": {
        "action": {"type": "string"},
        "code": {"type": "string", "x-mcp-header": "Code"},
    },
}


def _app() -> Fusion:
    app = Fusion("modern")

    @app.tool("t", description="Echoes.").action("echo")
    async def echo(code: str = "") -> str:
        """Echoes the code."""
        return f"code {code}"

    return app


def test_the_ping_interval_is_the_sdks() -> None:
    """A silent call opens its stream after the SDK's interval, no sooner or later."""
    assert PING_INTERVAL == _streamable_http_modern._SSE_PING_INTERVAL


@pytest.mark.parametrize(
    "options",
    [{}, {"stateless": True}, {"json_response": True}, {"stateless": True, "json_response": True}],
)
def test_on_in_every_session_mode(options: dict[str, Any]) -> None:
    """2026-07-28 has no session: stateless and JSON-answering servers take it too."""
    app = _app()
    server = build_server(app)
    endpoint = HotEndpoint(SessionManager(app=server, **options), server, app, hub_of(server))
    assert endpoint.modern is not None


def test_off_beside_middleware_of_the_servers_own() -> None:
    """A server with middleware of its own answers its 2026-07-28 calls through the SDK."""
    app = _app()
    server = build_server(app)

    async def own(ctx: Any, call_next: Any) -> Any:
        return await call_next(ctx)

    server.middleware.append(own)
    endpoint = HotEndpoint(SessionManager(app=server), server, app, hub_of(server))
    assert endpoint.modern is None


async def _take(headers: dict[str, str], code: str) -> tuple[bool, list[Message]]:
    """Offers a JSON-answered call to a server whose tool declares an Mcp-Param header."""
    app = _app()
    server = build_server(app)
    server.get_tool_input_schema = lambda name: DECLARING
    calls = ModernCalls(app, server, hub_of(server), json_response=True)
    params = {"name": "t", "arguments": {"action": "echo", "code": code}, "_meta": ENVELOPE}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    raw = {
        "accept": "application/json",
        "content-type": "application/json",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "t",
        **headers,
    }
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in raw.items()],
        MESSAGE: message,
    }
    sent: list[Message] = []

    async def receive() -> Message:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        sent.append(message)

    with anyio.fail_after(10):
        async with app.running():
            taken = await calls.take(scope, receive, send, message)
    return taken, sent


async def test_a_declared_header_that_agrees_is_taken() -> None:
    """An Mcp-Param header the tool's schema declares, equal to its argument: answered here."""
    taken, sent = await _take({"mcp-param-code": "A7"}, "A7")
    assert taken
    assert sent[0]["status"] == 200
    assert b"code A7" in sent[1]["body"]


@pytest.mark.parametrize("headers", [{"mcp-param-code": "B8"}, {}])
async def test_a_declared_header_that_disagrees_is_the_sdks(headers: dict[str, str]) -> None:
    """A declared header contradicting its argument, or missing: left to the SDK's refusal."""
    taken, sent = await _take(headers, "A7")
    assert not taken
    assert sent == []


@pytest.mark.parametrize("request_id", [1, "one", 10**30, -(2**63) - 1])
def test_the_fast_json_is_the_stdlibs_bytes(request_id: RequestId) -> None:
    """Every ASCII character, DEL, non-ASCII text, a lone surrogate and ids beyond 64 bits
    come out exactly as the SDK's json.dumps writes them."""
    texts = [chr(c) for c in range(128)] + ["é", "\u2028", "✓", "\ud800", "a\x7fb", "plain"]
    for text in texts:
        data = {"jsonrpc": "2.0", "id": request_id, "result": {"text": text, "isError": False}}
        assert ascii_json(data) == json.dumps(data, separators=(",", ":")).encode(), text
