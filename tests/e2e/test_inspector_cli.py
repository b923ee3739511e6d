"""The MCP Inspector's CLI mode against mcpfusion servers: stdio, streamable HTTP (the hot
path on) and HTTP with JSON bodies; every answer compared with the app's own, in process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import ByteReceiveStream
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcpfusion.server import asgi_app
from tests.e2e import sample_app
from tests.e2e.servers import (
    CLI_SCRIPT,
    HERE,
    REPO,
    TARGET,
    http_server,
    require_npm,
    uvicorn_in_process,
)
from tests.e2e.shelf_app import app as shelf

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

INSPECTOR = "@modelcontextprotocol/inspector-cli"
INSPECTOR_VERSION = "1.0.3"
"""Pinned: the CLI of ``@modelcontextprotocol/inspector`` 1.0.3 (the same build), packaged
alone; that package declares Node 22, this one no engine, and its CLI runs on Node 20."""
SDK = "@modelcontextprotocol/sdk"
SDK_VERSION = "1.32.2"
"""The TypeScript SDK under the CLI, pinned too (the CLI asks for ^1.25.2)."""
SCRATCH = REPO / ".e2e-inspector"
SHELF = f"{HERE / 'shelf_app.py'}:app"
TRANSPORTS = ("stdio", "http", "http-json")


@dataclass(frozen=True)
class Inspected:
    """What one Inspector CLI run did: its exit code, its JSON on stdout, its stderr."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def printed(self) -> Any:
        assert self.returncode == 0, self.stderr
        return json.loads(self.stdout)


@pytest.fixture(scope="module")
def inspector() -> Path:
    """The Inspector's CLI launcher, installed from npm into ``.e2e-inspector/``."""
    npm = require_npm("the Inspector CLI test")
    modules = SCRATCH / "node_modules"
    wanted = {INSPECTOR: INSPECTOR_VERSION, SDK: SDK_VERSION}
    if any(_installed(modules / name) != version for name, version in wanted.items()):
        SCRATCH.mkdir(exist_ok=True)
        (SCRATCH / "package.json").write_text('{"private": true}\n')
        packages = [f"{name}@{version}" for name, version in wanted.items()]
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", *packages],
            cwd=SCRATCH,
            check=True,
            capture_output=True,
            timeout=300,
        )
    return modules / INSPECTOR / "build" / "cli.js"


def _installed(package: Path) -> str | None:
    manifest = package / "package.json"
    return json.loads(manifest.read_text())["version"] if manifest.is_file() else None


async def inspect(cli: Path, target: list[str], method: str, *options: str) -> Inspected:
    """Runs ``inspector --cli TARGET --method METHOD OPTIONS`` with a bound on its time.

    The launcher starts the CLI proper, which starts a stdio server: all in a session of
    their own, killed together if the bound runs out.
    """
    command = ["node", str(cli), "--cli", *target, "--method", method, *options]
    # The CLI finds its own package.json through the working directory ("../package.json",
    # else it imports one beside its parent folder): from its build folder, both are right.
    process = await anyio.open_process(command, cwd=cli.parent, start_new_session=True)
    out, err = bytearray(), bytearray()

    async def drain(stream: ByteReceiveStream | None, into: bytearray) -> None:
        assert stream is not None
        async for chunk in stream:
            into += chunk

    try:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(drain, process.stdout, out)
                group.start_soon(drain, process.stderr, err)
            returncode = await process.wait()
    finally:
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
            with anyio.move_on_after(10):
                await process.wait()
        await process.aclose()
    return Inspected(returncode, out.decode(), err.decode())


@pytest.fixture(scope="module", params=TRANSPORTS)
async def targets(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, list[str]]]:
    """The Inspector's target arguments for the sample app and the shelf app, by transport:
    ``mcpfusion run`` over stdio, ``--http`` (the hot path on), ``--http --json-response``."""
    if request.param == "stdio":
        yield {"sample": [CLI_SCRIPT, "run", TARGET], "shelf": [CLI_SCRIPT, "run", SHELF]}
        return
    extra = ("--json-response",) if request.param == "http-json" else ()
    async with http_server(*extra) as sample_url, http_server(*extra, target=SHELF) as shelf_url:
        yield {
            "sample": [sample_url, "--transport", "http"],
            "shelf": [shelf_url, "--transport", "http"],
        }


async def test_inspector_lists_the_tools(
    inspector: Path, targets: dict[str, list[str]], app: Any
) -> None:
    """tools/list prints the app's tools, definitions unchanged."""
    done = await inspect(inspector, targets["sample"], "tools/list")
    assert done.printed == {"tools": app.list_tools()}


CALLS = [
    pytest.param("billing", {"action": "get", "invoice_id": "INV-1"}, id="presented"),
    pytest.param("billing", {"action": "list", "status": "overdue"}, id="collection"),
    pytest.param("reports", {"action": "totals", "currency": "USD"}, id="structured"),
    pytest.param("ops_ping", {}, id="flat"),
    pytest.param("billing", {"action": "get", "invoice_id": "INV-404"}, id="tool-error"),
    pytest.param("billing", {"action": "fail"}, id="crash"),
    pytest.param("billing", {"action": "get"}, id="invalid"),
    pytest.param("billing", {"action": "pay"}, id="unknown-action"),
]


@pytest.mark.parametrize(("tool", "arguments"), CALLS)
async def test_inspector_calls_a_tool_and_gets_the_apps_result(
    inspector: Path,
    targets: dict[str, list[str]],
    app: Any,
    tool: str,
    arguments: dict[str, str],
) -> None:
    """tools/call prints the result the app gives in process: its blocks, structured content
    and isError, whether the call succeeded, failed or was refused."""
    pairs = [f"{key}={value}" for key, value in arguments.items()]
    options = ["--tool-name", tool, *(["--tool-arg", *pairs] if pairs else [])]
    done = await inspect(inspector, targets["sample"], "tools/call", *options)
    expected = (await app.call_tool(tool, arguments)).to_mcp()
    assert done.printed == expected


async def test_inspector_lists_resources_templates_and_prompts(
    inspector: Path, targets: dict[str, list[str]]
) -> None:
    """resources/list, resources/templates/list and prompts/list print the app's own lists."""
    resources = await inspect(inspector, targets["shelf"], "resources/list")
    templates = await inspect(inspector, targets["shelf"], "resources/templates/list")
    prompts = await inspect(inspector, targets["shelf"], "prompts/list")
    assert resources.printed["resources"] == shelf.list_resources()
    assert templates.printed["resourceTemplates"] == shelf.list_resource_templates()
    assert prompts.printed["prompts"] == shelf.list_prompts()


@pytest.mark.parametrize("uri", ["shelf://readme", "shelf://books/2"])
async def test_inspector_reads_a_resource(
    inspector: Path, targets: dict[str, list[str]], uri: str
) -> None:
    """resources/read prints the contents the app reads in process, a Presenter's included."""
    done = await inspect(inspector, targets["shelf"], "resources/read", "--uri", uri)
    expected = await shelf.surface.read_resource(uri)
    assert done.printed["contents"] == list(expected.contents)


async def test_inspector_is_told_a_resource_is_missing(
    inspector: Path, targets: dict[str, list[str]]
) -> None:
    """A read of a missing resource is a JSON-RPC error the CLI reports, code and message."""
    done = await inspect(inspector, targets["shelf"], "resources/read", "--uri", "shelf://books/9")
    assert done.returncode == 1
    assert "MCP error -32602: Book 9 does not exist." in done.stderr


async def test_inspector_gets_a_prompt(inspector: Path, targets: dict[str, list[str]]) -> None:
    """prompts/get prints the app's messages for the arguments given as strings."""
    options = ["--prompt-name", "review", "--prompt-args", "book_id=1", "tone=blunt"]
    done = await inspect(inspector, targets["shelf"], "prompts/get", *options)
    expected = await shelf.surface.get_prompt("review", {"book_id": "1", "tone": "blunt"})
    assert done.printed == expected.to_mcp()


def recording(inner: ASGIApp, answers: list[tuple[str, str]]) -> ASGIApp:
    """Wraps an ASGI app: records each POSTed JSON-RPC method with its answer's content type."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        body = bytearray()

        async def receiving() -> Message:
            message = await receive()
            body.extend(message.get("body", b""))
            return message

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start" and scope["method"] == "POST":
                kind = dict(message["headers"]).get(b"content-type", b"").decode()
                answers.append((json.loads(body).get("method", "answer"), kind.split(";")[0]))
            await send(message)

        await inner(scope, receiving, sending)

    return wrapped


@pytest.mark.parametrize(
    ("hot_path", "kind"), [(True, "application/json"), (False, "text/event-stream")]
)
async def test_the_hot_path_answers_the_inspectors_call(
    inspector: Path, app: Any, hot_path: bool, kind: str
) -> None:
    """With the hot path on, the Inspector's tools/list and tools/call get its JSON bodies
    (the SDK streams them as SSE): the result is the same either way."""
    answers: list[tuple[str, str]] = []
    served = recording(asgi_app(sample_app.app, hot_path=hot_path), answers)
    async with uvicorn_in_process(served) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        arguments = {"action": "get", "invoice_id": "INV-2"}
        options = ["--tool-name", "billing", "--tool-arg", "action=get", "invoice_id=INV-2"]
        done = await inspect(inspector, [url, "--transport", "http"], "tools/call", *options)
    assert done.printed == (await app.call_tool("billing", arguments)).to_mcp()
    # The CLI lists the tools before it calls one: both are the hot path's when it is on.
    assert [(m, k) for m, k in answers if m.startswith("tools/")] == [
        ("tools/list", kind),
        ("tools/call", kind),
    ]
