"""mcpfusion's stdio transport in a real subprocess: the official client and raw pipes."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client, StdioServerParameters

from tests.client_results import first_text
from tests.e2e import servers
from tests.e2e.sample_app import app as sample

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"},
}
BIG = b"9" * 5_000
MODES = ["auto", "legacy"]
"""The official client's eras: ``auto`` lands on 2026-07-28 (the SDK path), ``legacy`` on the
handshake, whose tool calls take the hot path."""


def command(transport: str = "mcpfusion") -> list[str]:
    """The command serving the sample app on ``transport`` (see ``tests.e2e.stdio_server``)."""
    return [sys.executable, "-m", "tests.e2e.stdio_server", servers.TARGET, "--with", transport]


def params(transport: str = "mcpfusion") -> StdioServerParameters:
    """Spawn parameters of the sample app on ``transport``, for the official client."""
    executable, *args = command(transport)
    return StdioServerParameters(command=executable, args=args, cwd=servers.REPO)


def rpc(request_id: Any, method: str, params: Any = None) -> bytes:
    """A JSON-RPC request (a notification when ``request_id`` is None) as one line."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        message["id"] = request_id
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


class Raw:
    """A raw line-based client of one server process."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = BufferedByteReceiveStream(process.stdout)

    async def send(self, *lines: bytes) -> None:
        """Writes each line and its newline."""
        await self.stdin.send(b"".join(line + b"\n" for line in lines))

    async def receive(self) -> Any:
        """The next line the server wrote, parsed (it must be JSON)."""
        return json.loads(await self.stdout.receive_until(b"\n", 1 << 26))

    async def until(self, request_id: Any) -> list[Any]:
        """Every message up to and including the answer to ``request_id``."""
        received = []
        while True:
            message = await self.receive()
            received.append(message)
            answer = isinstance(message, dict) and "method" not in message
            if answer and message.get("id") == request_id:
                return received

    async def initialize(self, version: str = "2025-11-25") -> None:
        """The handshake."""
        await self.send(rpc("init", "initialize", {**INITIALIZE, "protocolVersion": version}))
        assert (await self.until("init"))[-1]["result"]["protocolVersion"] == version
        await self.send(rpc(None, "notifications/initialized"))


@asynccontextmanager
async def raw(transport: str = "mcpfusion", **kwargs: Any) -> AsyncIterator[Raw]:
    """The sample app in a subprocess on ``transport``, driven line by line."""
    kwargs.setdefault("stderr", subprocess.DEVNULL)
    async with await anyio.open_process(command(transport), cwd=servers.REPO, **kwargs) as process:
        yield Raw(process)


@pytest.mark.parametrize("mode", MODES)
async def test_the_official_client_sees_the_app(mode: str) -> None:
    """Identity, tools/list and every kind of call arrive as the app makes them."""
    calls = [
        ("billing", {"action": "get", "invoice_id": "INV-1"}),
        ("billing", {"action": "list", "status": "paid"}),
        ("reports", {"action": "totals", "currency": "USD"}),
        ("billing", {"action": "get", "invoice_id": "INV-99"}),
        ("nope", {}),
    ]
    with anyio.fail_after(30):
        async with Client(params(), mode=mode) as client:
            assert client.server_info is not None and client.server_info.name == "sample"
            listed = await client.list_tools()
            results = [await client.call_tool(name, arguments) for name, arguments in calls]
    tools = [tool.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools]
    assert tools == sample.list_tools()
    for (name, arguments), result in zip(calls, results, strict=True):
        expected = (await sample.call_tool(name, arguments)).to_mcp()
        got = {
            "content": [c.model_dump(by_alias=True, exclude_none=True) for c in result.content],
            "isError": result.is_error,
        }
        if result.structured_content is not None:
            got["structuredContent"] = result.structured_content
        assert got == expected


@pytest.mark.parametrize("mode", MODES)
async def test_progress_reaches_the_client(mode: str) -> None:
    """Reports made by a handler arrive as progress notifications, in order."""
    received: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append((progress, total, message))

    with anyio.fail_after(30):
        async with Client(params(), mode=mode) as client:
            result = await client.call_tool(
                "billing", {"action": "export", "rows": 3}, progress_callback=on_progress
            )
    assert first_text(result) == "exported 3 rows"
    assert received == [(n, 3, f"row {n}/3") for n in (1, 2, 3)]


async def stats(client: Client) -> dict[str, int]:
    """The slow action's counters in the server process."""
    result = await client.call_tool("ops_stats", {})
    assert result.structured_content is not None
    counters: dict[str, int] = result.structured_content
    return counters


@pytest.mark.parametrize("mode", MODES)
async def test_a_cancelled_call_stops_its_handler(mode: str) -> None:
    """Cancelling a call in the client cancels its handler; the session goes on."""
    with anyio.fail_after(30):
        async with Client(params(), mode=mode) as client:
            before = await stats(client)
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "billing", {"action": "wait", "seconds": 60})
                while (await stats(client))["started"] == before["started"]:
                    pass  # each look is a round trip to the server: no sleep needed
                group.cancel_scope.cancel()
            while (await stats(client))["cancelled"] == before["cancelled"]:
                pass
            assert first_text(await client.call_tool("ops_ping", {})) == "pong"
            assert (await stats(client))["finished"] == before["finished"]


async def test_closing_stdin_ends_the_server_cleanly() -> None:
    """With stdin closed the server exits 0; a call still running after the grace is told the
    connection closed."""
    with anyio.fail_after(30):
        async with raw() as server:
            await server.initialize()
            await server.send(rpc(1, "tools/call", {"name": "ops_stats", "arguments": {}}))
            (answer,) = await server.until(1)
            before = answer["result"]["structuredContent"]["started"]
            wait = {"name": "billing", "arguments": {"action": "wait", "seconds": 60}}
            await server.send(rpc(2, "tools/call", wait))
            while answer["result"]["structuredContent"]["started"] == before:
                await server.send(rpc(3, "tools/call", {"name": "ops_stats", "arguments": {}}))
                (answer,) = await server.until(3)
            await server.stdin.aclose()
            closed = await server.until(2)
            assert await server.process.wait() == 0
    assert closed == [
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32000, "message": "Connection closed"}}
    ]


async def test_a_stray_print_never_reaches_the_protocol_stream() -> None:
    """A handler printing to stdout does not corrupt it: the text goes to stderr."""
    with tempfile.TemporaryFile() as log:
        with anyio.fail_after(30):
            async with raw(stderr=log) as server:
                await server.initialize()
                call = {"name": "billing", "arguments": {"action": "fail"}}
                await server.send(rpc(1, "tools/call", call))
                (answer,) = await server.until(1)
                await server.send(rpc(2, "ping"))
                assert (await server.until(2)) == [{"jsonrpc": "2.0", "id": 2, "result": {}}]
                await server.stdin.aclose()
                assert await server.process.wait() == 0
        log.seek(0)
        stderr = log.read().decode()
    assert answer["result"]["isError"] is True
    assert "stray output from a handler" in stderr


BAD_LINES = [
    (b"not json", None, -32700),
    (b'{"jsonrpc":"2.0","id":5,"method":"ping"', 5, -32700),
    (b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":' + b"[" * 10_000, 5, -32700),
    (b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"\\ud800"}}', 5, -32700),
    (b'{"jsonrpc":"2.0","id":"s","method":"ping","params":{"x":' + BIG + b"}}", "s", -32700),
    (b'{"jsonrpc":"2.0","id":' + BIG + b',"method":"ping"}', None, -32700),
    (b"[]", None, -32600),
    (b"42", None, -32600),
    (b'{"jsonrpc":"2.0","id":5}', 5, -32600),
    (b'{"jsonrpc":"1.0","id":5,"method":"ping"}', 5, -32600),
    (b'{"jsonrpc":"2.0","id":5,"method":42}', 5, -32600),
    (b'{"jsonrpc":"2.0","id":5,"method":"ping","params":"x"}', 5, -32600),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', None, -32600),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None, -32600),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', None, -32600),
    (b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}}', 5, -32602),
    (
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x","arguments":[]}}',
        5,
        -32602,
    ),
]


@pytest.mark.parametrize("transport", ["mcpfusion", "transport"])
async def test_every_bad_request_gets_one_error_and_the_server_stays_up(transport: str) -> None:
    """Each bad line gets exactly one short JSON-RPC error with its id; ping works after."""
    with anyio.fail_after(60):
        async with raw(transport) as server:
            await server.initialize()
            for n, (line, request_id, code) in enumerate(BAD_LINES):
                await server.send(line, rpc(f"ping-{n}", "ping"))
                *errors, pong = await server.until(f"ping-{n}")
                assert pong["result"] == {}
                assert [(e["id"], e["error"]["code"]) for e in errors] == [(request_id, code)]
                message = errors[0]["error"]["message"]
                assert len(message) < 120 and "pydantic" not in message, message
                assert "ping" not in message and "9999" not in message, message


@pytest.mark.parametrize("mode", MODES)
async def test_a_five_megabyte_argument_is_served(mode: str) -> None:
    """A line of several megabytes is read whole; the session goes on."""
    text = "x" * 5_000_000
    with anyio.fail_after(60):
        async with Client(params(), mode=mode) as client:
            result = await client.call_tool("billing", {"action": "note", "text": text})
            assert first_text(await client.call_tool("ops_ping", {})) == "pong"
    assert '"length": 5000000' in first_text(result)


async def test_a_batch_on_2025_03_26_gets_one_array() -> None:
    """On a 2025-03-26 session a batch is served; its answers arrive as one array line."""
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ops_ping"}},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
    ]
    with anyio.fail_after(30):
        async with raw() as server:
            await server.initialize("2025-03-26")
            await server.send(json.dumps(batch).encode())
            answers = await server.receive()
    assert sorted(answer["id"] for answer in answers) == [1, 2]


async def test_a_file_as_stdin_is_read_by_threads(tmp_path: Path) -> None:
    """Requests in a regular file are all answered, to a regular file, and the server exits 0."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(
        b"\n".join(
            [
                rpc("init", "initialize", INITIALIZE),
                rpc(None, "notifications/initialized"),
                rpc(1, "ping"),
                rpc(2, "tools/list"),
                b"not json",
            ]
        )
    )
    answers = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = subprocess.run(
            command(), cwd=servers.REPO, stdin=stdin, stdout=stdout, timeout=30, check=False
        )
    assert done.returncode == 0
    messages = [json.loads(line) for line in answers.read_bytes().splitlines()]
    assert sorted(json.dumps(m["id"]) for m in messages) == ['"init"', "1", "2", "null"]
    assert os.path.getsize(answers) > 0


async def test_a_tty_as_stdin_is_read_by_threads() -> None:
    """A terminal on stdin, which the event loop cannot poll, is served; hanging up ends it."""
    terminal, stdin = pty.openpty()
    try:
        with anyio.fail_after(30):
            async with await anyio.open_process(
                command(), cwd=servers.REPO, stdin=stdin, stderr=subprocess.DEVNULL
            ) as process:
                os.close(stdin)
                stdin = -1
                assert process.stdout is not None
                answers = BufferedByteReceiveStream(process.stdout)
                os.write(terminal, rpc("init", "initialize", INITIALIZE) + b"\n")
                answer = json.loads(await answers.receive_until(b"\n", 1 << 20))
                os.close(terminal)  # hanging up the terminal is the end of stdin
                terminal = -1
                assert await process.wait() == 0
    finally:
        for fd in (terminal, stdin):
            if fd >= 0:
                os.close(fd)
    assert answer["id"] == "init" and "result" in answer
