"""MCP tasks (SEP-2663) driven by the v2 TypeScript SDK client over stdio and streamable HTTP.

The client (``@modelcontextprotocol/client``, pinned; it speaks 2026-07-28) declares the
tasks extension as a client capability, calls a task action, polls ``tasks/get`` and sends
``tasks/cancel`` through its generic ``request`` with a schema, the scenario of
``test_tasks_e2e.py``. Its codec refuses a ``resultType: "task"`` answer, so the script
claims that one answer in the client's ``_onresponse`` seam (see ``node_tasks.mjs``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e import servers

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

CLIENT = "@modelcontextprotocol/client"
CLIENT_VERSION = "2.4.0"
"""Pinned: the newest v2 release when this test was written; it pins ``@modelcontextprotocol/core``
to the same version and needs Node 20 or later."""
SCRATCH = servers.REPO / ".e2e-node-tasks"
"""Its own folder: installing here must not prune the v1 SDK of ``.e2e-node/``."""
TARGET = f"{servers.HERE / 'tasks_app.py'}:app"

Run = Callable[[str], Awaitable[dict[str, Any]]]


def _require_node_20() -> None:
    version = subprocess.run(
        ["node", "--version"], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    if int(version.lstrip("v").split(".")[0]) < 20:
        reason = f"{CLIENT} {CLIENT_VERSION} needs Node 20 or later, found {version.strip()}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI=true: a missing tool is a failure)")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def script() -> Path:
    """The Node script, beside the v2 client installed from npm into ``.e2e-node-tasks/``."""
    servers.npm_install(SCRATCH, CLIENT, CLIENT_VERSION, "the TypeScript v2 tasks test")
    _require_node_20()
    # Beside node_modules, so that Node resolves the client's bare import specifiers.
    copied = SCRATCH / "node_tasks.mjs"
    shutil.copyfile(servers.HERE / "node_tasks.mjs", copied)
    return copied


@pytest.fixture(scope="module")
async def http_url() -> AsyncIterator[str]:
    """The tasks app over streamable HTTP (stateful)."""
    async with servers.http_server(target=TARGET) as url:
        yield url


@pytest.fixture(scope="module")
async def stateless_url() -> AsyncIterator[str]:
    """The tasks app over stateless streamable HTTP."""
    async with servers.http_server("--stateless", target=TARGET) as url:
        yield url


@pytest.fixture(params=["stdio", "http", "http-stateless"])
def run(request: pytest.FixtureRequest, script: Path) -> Run:
    """Runs the Node script for a scenario over each transport; returns what it printed."""
    if request.param == "stdio":
        mode = "stdio"
        endpoint = json.dumps([sys.executable, "-m", "mcpfusion.cli", "run", TARGET])
    else:
        mode = "http"
        fixture = "http_url" if request.param == "http" else "stateless_url"
        endpoint = request.getfixturevalue(fixture)

    async def scenario(name: str) -> dict[str, Any]:
        command = ["node", str(script), mode, endpoint, name]
        with anyio.fail_after(90):
            done = await anyio.run_process(command, cwd=SCRATCH, check=False)
        assert done.returncode == 0, done.stderr.decode()
        printed: dict[str, Any] = json.loads(done.stdout)
        assert printed["protocolVersion"] == "2026-07-28"
        return printed

    return scenario


async def test_a_long_task_is_polled_its_progress_seen_and_cancelled(run: Run) -> None:
    """The TS client's ten-second task is polled until its progress shows, then cancelled."""
    printed = await run("cancel")
    created, progressed, ended = printed["created"], printed["progressed"], printed["ended"]
    assert created["resultType"] == "task"
    assert created["status"] == "working"
    assert progressed["taskId"] == ended["taskId"] == created["taskId"]
    assert progressed["status"] == "working"
    assert progressed["statusMessage"].startswith("step ")
    # The ack is an empty result (the client keeps resultType to itself): no task envelope.
    assert not {"taskId", "status", "result"} & set(printed["ack"])
    assert ended["status"] == "cancelled"
    assert "result" not in ended


async def test_a_task_completes_and_its_result_is_fetched(run: Run) -> None:
    """The TS client's short task runs to completion; tasks/get then carries the tool's result."""
    printed = await run("complete")
    assert printed["created"]["resultType"] == "task"
    ended = printed["ended"]
    assert ended["taskId"] == printed["created"]["taskId"]
    assert ended["status"] == "completed"
    assert ended["result"]["content"] == [{"type": "text", "text": "crunched 3 rounds"}]
    assert ended["result"]["isError"] is False
    assert ended["statusMessage"] == "crunching finished"


async def test_an_unknown_task_is_invalid_params(run: Run) -> None:
    """The TS client's tasks/get of an id the server never made is refused with -32602."""
    printed = await run("unknown")
    assert printed["refused"] == {"code": -32602, "message": "Unknown task: no-such-task"}


async def test_the_clients_own_call_tool_refuses_a_task(run: Run) -> None:
    """The v2 client's callTool rejects a CreateTaskResult (why the script claims it): when this
    fails, the pinned client reads tasks itself and the claim can go."""
    printed = await run("plain")
    assert printed["refused"] == {
        "code": "UNSUPPORTED_RESULT_TYPE",
        "message": "Unsupported result type 'task' for tools/call",
        "data": {"resultType": "task", "method": "tools/call"},
    }


async def test_without_the_extension_the_client_gets_no_tasks(run: Run) -> None:
    """A TS client that does not declare the extension has an "optional" action answered in
    its request and an "always" one refused with -32021."""
    printed = await run("undeclared")
    assert printed["inline"]["content"] == [{"type": "text", "text": "crunched 3 rounds"}]
    assert printed["refused"]["code"] == -32021
    assert "io.modelcontextprotocol/tasks" in printed["refused"]["message"]
