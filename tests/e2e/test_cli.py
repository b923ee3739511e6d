"""The installed ``mcpfusion`` command, run as a subprocess: inspect, call, run."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from anyio.streams.text import TextReceiveStream
from mcp import Client, StdioServerParameters

from mcpfusion.terminal import TokenCounter, definition_json
from tests.client_results import first_text
from tests.e2e.servers import CLI_SCRIPT, REPO, TARGET, http_server, run_cli

pytestmark = pytest.mark.e2e

INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"},
}
FAIL = {"name": "billing", "arguments": {"action": "fail"}}


def test_inspect_shows_every_tool_with_token_counts(app: Any) -> None:
    """``inspect`` prints each tool's definition and its o200k token count, then the total."""
    done = run_cli("inspect", TARGET)
    assert done.returncode == 0, done.stderr
    counter = TokenCounter()
    counts = [counter.count(definition_json(tool)) for tool in app.list_tools()]
    for tool, count in zip(app.list_tools(), counts, strict=True):
        assert f"── {tool['name']} · {count} tokens" in done.stdout
        assert tool["description"] in done.stdout
    total = sum(c for c in counts if c is not None)
    assert f"── total: {len(counts)} tools · {total} tokens" in done.stdout
    assert "\x1b[" not in done.stdout  # no colour when piped


def test_inspect_json_is_the_tools_list(app: Any) -> None:
    """``inspect --json`` prints exactly the ``tools/list`` result."""
    done = run_cli("inspect", TARGET, "--json")
    assert json.loads(done.stdout) == {"tools": app.list_tools()}


def test_inspect_accepts_a_module_target(app: Any) -> None:
    """A ``package.module:app`` target is imported from the current directory."""
    done = run_cli("inspect", "tests.e2e.sample_app:app", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"tools": app.list_tools()}


@pytest.mark.anyio
async def test_call_labels_each_block(app: Any) -> None:
    """``call`` prints each block verbatim under a label naming its kind and tokens."""
    done = run_cli("call", TARGET, "billing", "get", "invoice_id=INV-1")
    assert done.returncode == 0, done.stderr
    blocks = (await app.call_tool("billing", {"action": "get", "invoice_id": "INV-1"})).blocks
    labels = [line for line in done.stdout.splitlines() if line.startswith("── ")]
    assert [label.split(" · ")[0] for label in labels] == [
        "── data json",
        '── ui type="echarts" title="Invoice INV-1" width="half" priority="0"',
        '── embed type="markdown"',
        "── directives",
        "── rules",
        "── suggestions",
        "── total: 6 blocks",
    ]
    assert all(label.split(" · ")[1].endswith(" tokens") for label in labels)
    for block in blocks:
        assert block in done.stdout


@pytest.mark.anyio
async def test_call_json_is_the_exact_result(app: Any) -> None:
    """``call --json`` prints the MCP result dict the in-process call gives."""
    arguments = ["reports", "totals", "currency=USD", "--json"]
    done = run_cli("call", TARGET, *arguments)
    expected = await app.call_tool("reports", {"action": "totals", "currency": "USD"})
    assert json.loads(done.stdout) == expected.to_mcp()


def test_call_parses_values_as_json() -> None:
    """Values are JSON when they parse (lists, numbers), else strings."""
    done = run_cli("call", TARGET, "billing", "get", "invoice_id=INV-2", '_select=["id"]')
    assert done.returncode == 0, done.stderr
    assert '{\n  "id": "INV-2"\n}' in done.stdout


def test_call_error_result_exits_1() -> None:
    """A result with isError is shown, labelled by its code, and the exit status is 1."""
    done = run_cli("call", TARGET, "billing", "get")
    assert done.returncode == 1
    assert "── error code=VALIDATION_ERROR" in done.stdout


def test_call_reports_progress_on_stderr() -> None:
    """Progress reports of an in-process call go to stderr, in order."""
    done = run_cli("call", TARGET, "billing", "export", "rows=2")
    assert done.stderr.splitlines() == ["progress 1/2 row 1/2", "progress 2/2 row 2/2"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("inspect", "no_such_module:app"), "mcpfusion: no module named 'no_such_module'"),
        (("inspect", "missing/app.py:app"), "mcpfusion: no such file: missing/app.py"),
        (("inspect", f"{TARGET}x"), "has no attribute 'appx'"),
        (("inspect", TARGET.replace(":app", ":STATE")), "is a dict, not an mcpfusion app"),
        (("call", TARGET, "nope"), "mcpfusion: unknown tool 'nope'; tools: billing, reports"),
        (("call", TARGET, "billing", "get", "invoice_id"), "bad argument 'invoice_id'"),
        (("call", TARGET, "ops_ping", "now"), "tool 'ops_ping' has no actions"),
    ],
)
def test_mistakes_get_one_line_and_status_2(args: tuple[str, ...], message: str) -> None:
    """A bad target, unknown tool or bad argument is one line on stderr and exit status 2."""
    done = run_cli(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and message in done.stderr


@pytest.mark.anyio
async def test_run_serves_stdio_to_the_client(app: Any) -> None:
    """``mcpfusion run TARGET`` speaks MCP on stdout and nothing else."""
    params = StdioServerParameters(command=CLI_SCRIPT, args=["run", TARGET], cwd=REPO)
    with anyio.fail_after(30):
        async with Client(params) as client:
            listed = await client.list_tools()
            result = await client.call_tool("billing", {"action": "fail"})  # logs a traceback
            ping = await client.call_tool("ops_ping", {})
    assert [t.name for t in listed.tools] == [t["name"] for t in app.list_tools()]
    assert result.is_error and first_text(ping) == "pong"


@pytest.mark.anyio
async def test_run_stdio_writes_only_protocol_messages_to_stdout() -> None:
    """On stdio, logs, tracebacks and stray prints go to stderr; stdout is JSON-RPC only."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": FAIL},
    ]
    stdout = ""
    with anyio.fail_after(30):
        async with await anyio.open_process([CLI_SCRIPT, "run", TARGET], cwd=REPO) as process:
            assert process.stdin and process.stdout and process.stderr
            await process.stdin.send("".join(json.dumps(m) + "\n" for m in messages).encode())
            async for chunk in TextReceiveStream(process.stdout):
                stdout += chunk
                if '"id":2' in stdout:
                    break
            await process.stdin.aclose()
            stdout += "".join([chunk async for chunk in TextReceiveStream(process.stdout)])
            stderr = "".join([chunk async for chunk in TextReceiveStream(process.stderr)])
            assert await process.wait() == 0, stderr
    replies = [json.loads(line) for line in stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[1]["result"]["isError"] is True
    assert "stray output from a handler" in stderr
    assert "RuntimeError: database exploded" in stderr  # the traceback is logged


@pytest.mark.anyio
async def test_run_http_announces_its_endpoint() -> None:
    """``mcpfusion run --http --port 0`` picks a port and announces the endpoint URL."""
    with anyio.fail_after(30):
        async with http_server("--path", "/custom") as url, Client(url) as client:
            assert url.endswith("/custom")
            assert first_text(await client.call_tool("ops_ping", {})) == "pong"
