"""A catalogue of bad requests: each gets its proper answer and the server stays up."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import anyio
import httpx2
import pytest
from anyio.streams.text import TextReceiveStream
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from mcpfusion.wire import parse
from tests.client_results import first_text
from tests.e2e import servers
from tests.e2e.conftest import Connect

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
FIVE_MB = "x" * 5_000_000


INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"},
}


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC request."""
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}


def body(method: str, params: dict[str, Any]) -> bytes:
    """A JSON-RPC request as an HTTP body."""
    return json.dumps(rpc(method, params)).encode()


def sse_message(text: str) -> dict[str, Any]:
    """The JSON-RPC message of a one-event SSE body."""
    data = next(line for line in text.splitlines() if line.startswith("data: "))
    message: dict[str, Any] = json.loads(data.removeprefix("data: "))
    return message


async def still_up(url: str) -> None:
    """A fresh client gets an answer from the server."""
    async with Client(url) as client:
        assert first_text(await client.call_tool("ops_ping", {})) == "pong"


async def stats(client: Client) -> dict[str, int]:
    """The slow action's counters in the server process."""
    result = await client.call_tool("ops_stats", {})
    assert result.structured_content is not None
    counters: dict[str, int] = result.structured_content
    return counters


async def until(client: Client, key: str, value: int) -> None:
    """Waits (bounded by the caller) until the server's counter ``key`` reaches ``value``."""
    while (await stats(client))[key] < value:
        await anyio.sleep(0.02)


async def test_malformed_json_body_gets_parse_error(stateless_url: str) -> None:
    """A body that is not JSON gets HTTP 400 with JSON-RPC -32700."""
    with anyio.fail_after(30):
        async with httpx2.AsyncClient(timeout=10) as http:
            response = await http.post(stateless_url, content=b"{not json", headers=HEADERS)
        await still_up(stateless_url)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700


async def test_arguments_that_are_not_an_object_get_invalid_params(stateless_url: str) -> None:
    """``arguments`` that is not an object is a protocol error: JSON-RPC -32602."""
    request = body("tools/call", {"name": "billing", "arguments": ["get"]})
    with anyio.fail_after(30):
        async with httpx2.AsyncClient(timeout=10) as http:
            response = await http.post(stateless_url, content=request, headers=HEADERS)
        await still_up(stateless_url)
    assert sse_message(response.text)["error"]["code"] == -32602


async def test_malformed_arguments_get_a_validation_error(connect: Connect) -> None:
    """Arguments of the wrong shape get a validation error the model can act on."""
    arguments = {"action": "list", "status": ["paid"], "_select": "id"}
    with anyio.fail_after(30):
        async with connect() as client:
            result = await client.call_tool("billing", arguments)
            assert first_text(await client.call_tool("ops_ping", {})) == "pong"
    error = parse(result.content).error
    assert result.is_error and error is not None and error.code == "VALIDATION_ERROR"
    assert 'name="status"' in error.message and 'name="_select"' in error.message


async def test_unknown_tool_lists_the_tools(http_url: str) -> None:
    """An unknown tool is an UNKNOWN_TOOL result naming the available tools."""
    with anyio.fail_after(30):
        async with Client(http_url) as client:
            result = await client.call_tool("billing_get", {"invoice_id": "INV-1"})
    error = parse(result.content).error
    assert result.is_error and error is not None and error.code == "UNKNOWN_TOOL"
    assert "<action>ops_ping</action>" in first_text(result)


async def test_five_megabyte_argument_over_http_gets_413(http_url: str) -> None:
    """Over HTTP a 5 MB request is refused with 413 before parsing; the server stays up."""
    request = body(
        "tools/call", {"name": "billing", "arguments": {"action": "note", "text": FIVE_MB}}
    )
    with anyio.fail_after(30):
        async with httpx2.AsyncClient(timeout=10) as http:
            response = await http.post(http_url, content=request, headers=HEADERS)
        # The SDK client fails its session: its task group raises what the transport hit.
        with pytest.raises(ExceptionGroup, match=r"^unhandled errors in a TaskGroup$") as raised:
            async with Client(http_url) as client:
                await client.call_tool("billing", {"action": "note", "text": FIVE_MB})
        await still_up(http_url)
    assert response.status_code == 413
    assert raised.group_contains(MCPError, depth=None)


async def test_five_megabyte_argument_over_stdio_is_served() -> None:
    """Over stdio, which has no size limit, a 5 MB argument reaches the handler whole."""
    with anyio.fail_after(60):
        async with Client(servers.stdio_params()) as client:
            result = await client.call_tool("billing", {"action": "note", "text": FIVE_MB})
            assert first_text(await client.call_tool("ops_ping", {})) == "pong"
    assert parse(result.content).view.data == {"length": 5_000_000}


async def test_ten_thousand_item_select_is_a_short_validation_error(connect: Connect) -> None:
    """A 10,000-item ``_select`` gets a validation error listing the allowed keys, briefly."""
    select = [f"field_{n}" for n in range(10_000)]
    arguments = {"action": "get", "invoice_id": "INV-1", "_select": select}
    with anyio.fail_after(30):
        async with connect() as client:
            result = await client.call_tool("billing", arguments)
            assert first_text(await client.call_tool("ops_ping", {})) == "pong"
    error = parse(result.content).error
    assert result.is_error and error is not None and error.code == "VALIDATION_ERROR"
    assert "customer" in error.message  # the allowed keys are listed
    assert len(first_text(result)) < 5_000


async def test_cancelled_call_stops_the_handler(connect: Connect) -> None:
    """A call the client cancels mid-way cancels its handler; the session goes on."""
    with anyio.fail_after(30):
        async with connect() as client:
            before = await stats(client)
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "billing", {"action": "wait", "seconds": 60})
                await until(client, "started", before["started"] + 1)
                group.cancel_scope.cancel()
            await until(client, "cancelled", before["cancelled"] + 1)
            after = await stats(client)
            assert first_text(await client.call_tool("ops_ping", {})) == "pong"
    assert after["finished"] == before["finished"]


async def test_client_that_disconnects_mid_call(http_url: str) -> None:
    """A client dropping its connection mid-call leaves the server answering others."""
    with anyio.fail_after(30):
        async with Client(http_url) as observer:
            before = await stats(observer)
            async with anyio.create_task_group() as group:

                async def walk_away() -> None:
                    # No session DELETE on close: the connection just goes away.
                    transport = streamable_http_client(http_url, terminate_on_close=False)
                    async with Client(transport) as client:
                        await client.call_tool("billing", {"action": "wait", "seconds": 60})

                group.start_soon(walk_away)
                await until(observer, "started", before["started"] + 1)
                group.cancel_scope.cancel()
            assert first_text(await observer.call_tool("ops_ping", {})) == "pong"
        await still_up(http_url)


async def test_stdio_client_that_goes_away_mid_call() -> None:
    """A stdio client closing the pipe mid-call ends the server process cleanly, once the
    grace for the call still running has passed."""
    params = servers.stdio_params()
    messages = [
        rpc("initialize", INITIALIZE) | {"id": 1},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        rpc("tools/call", {"name": "billing", "arguments": {"action": "wait"}}) | {"id": 2},
        rpc("ping", {}) | {"id": 3},
    ]
    with anyio.fail_after(30):
        async with await anyio.open_process(
            [params.command, *params.args], cwd=params.cwd, stderr=subprocess.DEVNULL
        ) as process:
            assert process.stdin is not None and process.stdout is not None
            lines = TextReceiveStream(process.stdout)
            await process.stdin.send(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
            received = ""
            while '"id":3' not in received:  # the ping is answered while the call runs
                received += await lines.receive()
            await process.stdin.aclose()
            assert await process.wait() == 0
    assert '"id":2' not in received
