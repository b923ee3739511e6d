"""Seams of stdio and the list notices: what a client reads, over real pipes and HTTP."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from examples.billing.server import create_app
from mcpfusion import Fusion, HttpOptions
from mcpfusion._serve.http.app import uvicorn_config
from mcpfusion._serve.redis import shared_state
from mcpfusion._serve.redis_link import CALL_WAIT
from mcpfusion.middleware import rate_limit
from tests.client_results import first_text
from tests.e2e import servers
from tests.e2e.servers import uvicorn_in_process
from tests.e2e.test_stdio_transport import INITIALIZE, command, raw, rpc
from tests.scale.services import redis_server

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LISTED = {"tools": {"listChanged": True}, "prompts": {"listChanged": True}}
"""What a Fusion app can announce (tools and prompts enabled at run time) is advertised."""


def advertised(capabilities: dict[str, Any]) -> dict[str, Any]:
    """The tools' and prompts' list-change flags among ``capabilities``."""
    return {kind: {"listChanged": capabilities[kind].get("listChanged")} for kind in LISTED}


async def test_stdio_advertises_the_list_notices_it_sends(tmp_path: Path) -> None:
    """On 2025-11-25 over stdio, initialize says listChanged true for tools and prompts."""
    example = ["-m", "examples.billing", "--db", str(tmp_path / "billing.db")]
    with anyio.fail_after(60):
        async with await anyio.open_process(
            [command()[0], *example], cwd=servers.REPO, stderr=subprocess.DEVNULL
        ) as process:
            assert process.stdin is not None and process.stdout is not None
            await process.stdin.send(rpc("init", "initialize", INITIALIZE) + b"\n")
            line = b""
            while not line.endswith(b"\n"):
                line += await process.stdout.receive()
            await process.stdin.aclose()
            assert await process.wait() == 0
    assert advertised(json.loads(line)["result"]["capabilities"]) == LISTED


async def test_http_advertises_the_list_notices_it_sends(tmp_path: Path) -> None:
    """On 2025-11-25 over HTTP, initialize says listChanged true for tools and prompts."""
    app = create_app(str(tmp_path / "billing.db"))
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}
    with anyio.fail_after(60):
        async with (
            uvicorn_in_process(uvicorn_config(app, HttpOptions(log_level="warning"))) as port,
            httpx2.AsyncClient(timeout=10) as http,
        ):
            answer = await http.post(
                f"http://127.0.0.1:{port}/mcp", json=initialize, headers=HEADERS
            )
    assert answer.status_code == 200, answer.text
    body = answer.text
    if answer.headers["content-type"].startswith("text/event-stream"):
        body = next(line[5:] for line in body.splitlines() if line.startswith("data:"))
    assert advertised(json.loads(body)["result"]["capabilities"]) == LISTED


@contextmanager
def writes_of(transport: str) -> Iterator[tuple[subprocess.Popen[bytes], socket.socket]]:
    """The sample app on ``transport`` writing to a packet socket: one packet per write."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ours.settimeout(30)
    process = subprocess.Popen(
        command(transport),
        cwd=servers.REPO,
        stdin=subprocess.PIPE,
        stdout=theirs.fileno(),
        stderr=subprocess.DEVNULL,
    )
    theirs.close()
    try:
        yield process, ours
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=30)
            ours.close()


async def writes_until(reader: socket.socket, request_id: Any) -> list[list[Any]]:
    """The messages of each write the server made, up to the one answering ``request_id``."""
    writes = []
    while True:
        packet = await anyio.to_thread.run_sync(reader.recv, 1 << 22)
        assert packet, "the server closed its stdout"
        messages = [json.loads(line) for line in packet.splitlines()]
        writes.append(messages)
        if any(m.get("id") == request_id and "method" not in m for m in messages):
            return writes


@pytest.mark.parametrize("transport", ["mcpfusion", "transport"])
async def test_a_calls_answer_leaves_in_a_later_write_than_its_progress(transport: str) -> None:
    """A call's last progress report and its answer never share a write, so a client that
    handles one chunk's response before its notifications (TypeScript's) gets every report."""
    export = {
        "name": "billing",
        "arguments": {"action": "export", "rows": 3},
        "_meta": {"progressToken": "p"},
    }
    with anyio.fail_after(60), writes_of(transport) as (process, reader):
        assert process.stdin is not None
        process.stdin.write(rpc("init", "initialize", INITIALIZE) + b"\n")
        process.stdin.flush()
        await writes_until(reader, "init")
        process.stdin.write(rpc(None, "notifications/initialized") + b"\n")
        process.stdin.write(rpc(1, "tools/call", export) + b"\n")
        process.stdin.flush()
        writes = await writes_until(reader, 1)
    *before, last = writes
    assert [m.get("method") for m in last] == [None]
    reports = [m["params"]["progress"] for w in before for m in w if "method" in m]
    assert reports == [1, 2, 3]


@pytest.mark.parametrize("transport", ["mcpfusion", "transport"])
async def test_requests_read_with_the_end_of_stdin_are_all_answered(transport: str) -> None:
    """A script piping its requests and closing stdin gets every answer, then the server
    exits 0: none is told "Connection closed"."""
    script = [
        rpc("init", "initialize", INITIALIZE),
        rpc(None, "notifications/initialized"),
        rpc(1, "tools/call", {"name": "ops_ping", "arguments": {}}),
        rpc(2, "ping"),
        rpc(3, "tools/list"),
        rpc(4, "tools/call", {"name": "billing", "arguments": {"action": "export", "rows": 2}}),
    ]
    with anyio.fail_after(60):
        async with raw(transport) as server:
            await server.send(*script)
            await server.stdin.aclose()  # in the same breath as the requests
            answers = {}
            for _ in range(5):
                message = await server.receive()
                answers[message["id"]] = message
            assert await server.process.wait() == 0
    assert sorted(answers, key=str) == [1, 2, 3, 4, "init"]
    assert all("result" in answer for answer in answers.values()), answers


def touching_app() -> Fusion:
    """An app whose one call takes a rate-limit token and publishes a state change."""
    app = Fusion("touching")
    app.middleware(rate_limit(rate=1000, burst=1000))

    @app.tool("things", exposition="flat").action("touch", invalidates=["things.*"])
    def touch() -> str:
        """Touches the things."""
        return "touched"

    return app


async def test_calls_go_on_while_redis_is_paused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With Redis paused (SIGSTOP: connections accepted, nothing answered), calls answer
    after waiting at most CALL_WAIT per Redis operation, not redis-py's 5 s socket timeout
    (the outage logged as that cut); rate limits fail open, as when Redis is down."""
    caplog.set_level(logging.WARNING, logger="mcpfusion")
    with redis_server(tmp_path / "redis") as redis:
        assert redis.process is not None
        options = HttpOptions(log_level="warning", **shared_state(redis.url))
        try:
            with anyio.fail_after(60):
                async with (
                    uvicorn_in_process(uvicorn_config(touching_app(), options)) as port,
                    Client(f"http://127.0.0.1:{port}/mcp", mode="legacy") as client,
                ):
                    touched = await client.call_tool("things_touch", {})
                    assert first_text(touched) == "touched"  # every link is connected
                    os.kill(redis.process.pid, signal.SIGSTOP)
                    # A call that waited 5 s on each Redis operation would need minutes.
                    for _ in range(5):
                        touched = await client.call_tool("things_touch", {})
                        assert first_text(touched) == "touched"
        finally:
            os.kill(redis.process.pid, signal.SIGCONT)
    cut = f"(TimeoutError: no answer within {CALL_WAIT:g} s)"
    warned = [r.getMessage() for r in caplog.records if "is unreachable" in r.getMessage()]
    parts = [
        "rate limits are not enforced",
        "server events are dropped",
        "SSE streams are not resumable",
    ]
    assert [part for part in parts if any(cut in w and part in w for w in warned)] == parts
