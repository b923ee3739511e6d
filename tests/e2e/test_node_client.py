"""A client that is not Python: the official TypeScript SDK over stdio and HTTP."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.servers import HERE, REPO, TARGET, http_server, npm_install

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SDK = "@modelcontextprotocol/sdk"
SDK_VERSION = "1.32.2"
"""Pinned: the newest release when this test was written; it supports Node 18 and later."""
SCRATCH = REPO / ".e2e-node"
ARGUMENTS = {"action": "get", "invoice_id": "INV-1"}


@pytest.fixture(scope="module")
def node_client() -> Path:
    """The Node script, beside the TypeScript SDK installed from npm into ``.e2e-node/``."""
    npm_install(SCRATCH, SDK, SDK_VERSION, "the TypeScript-SDK client test")
    # Beside node_modules, so that Node resolves the SDK's bare import specifiers.
    shutil.copyfile(HERE / "node_talking.mjs", SCRATCH / "node_talking.mjs")
    script = SCRATCH / "node_client.mjs"
    shutil.copyfile(HERE / "node_client.mjs", script)
    return script


async def run_node(
    script: Path,
    mode: str,
    endpoint: str,
    tool: str = "billing",
    arguments: dict[str, Any] = ARGUMENTS,
) -> dict[str, Any]:
    """Runs the Node client; returns what it printed."""
    command = ["node", str(script), mode, endpoint, tool, json.dumps(arguments)]
    with anyio.fail_after(60):
        done = await anyio.run_process(command, cwd=SCRATCH, check=False)
    assert done.returncode == 0, done.stderr.decode()
    printed: dict[str, Any] = json.loads(done.stdout)
    return printed


async def check(printed: dict[str, Any], app: Any) -> None:
    """The Node client saw the app's identity, tools and blocks."""
    assert printed["server"] == {"name": "sample", "version": "1.2.3"}
    assert printed["tools"] == app.list_tools()
    expected = (await app.call_tool("billing", ARGUMENTS)).to_mcp()
    assert printed["result"]["content"] == expected["content"]
    assert printed["result"].get("isError", False) is False


async def test_typescript_client_over_stdio(node_client: Path, app: Any) -> None:
    """The TypeScript SDK lists tools and calls one over stdio."""
    command = [sys.executable, "-m", "mcpfusion.cli", "run", TARGET]
    await check(await run_node(node_client, "stdio", json.dumps(command)), app)


async def test_typescript_client_over_http(node_client: Path, app: Any, http_url: str) -> None:
    """The TypeScript SDK lists tools and calls one over streamable HTTP."""
    await check(await run_node(node_client, "http", http_url), app)


async def test_typescript_client_takes_a_warning_on_a_structured_action(
    node_client: Path, app: Any, http_url: str
) -> None:
    """The TypeScript SDK accepts a structured action's warning: an error result, no throw."""
    printed = await run_node(node_client, "http", http_url, "hazards", {"action": "warn"})
    assert printed["result"]["isError"] is True
    assert "structuredContent" not in printed["result"]
    assert 'severity="warning"' in printed["result"]["content"][0]["text"]


SURFACE = f"{HERE / 'surface_app.py'}:app"
ANSWERS = [
    ({"action": "accept", "content": {"reason": "rent"}}, "rent/hi"),
    ({"action": "decline"}, "decline/hi"),
    ({"action": "cancel"}, "cancel/hi"),
]


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize(("answer", "said"), ANSWERS)
async def test_typescript_client_is_asked_sampled_and_logged_to(
    node_client: Path, transport: str, answer: dict[str, Any], said: str
) -> None:
    """The TypeScript SDK answers a question and a sampling request, and hears the log
    messages at the level it set, and no others."""
    script = str(node_client.with_name("node_talking.mjs"))
    if transport == "stdio":
        endpoint = json.dumps([sys.executable, "-m", "mcpfusion.cli", "run", SURFACE])
        printed = await _run_surface(script, "stdio", endpoint, answer)
    else:
        async with http_server(target=SURFACE) as url:
            printed = await _run_surface(script, "http", url, answer)
    assert printed["chat"]["content"] == [{"type": "text", "text": said}]
    assert printed["hello"]["content"] == [{"type": "text", "text": "hello"}]
    assert printed["questions"] == ["Why?"]
    assert printed["logs"] == [["warning", {"message": "warning line", "data": {"n": 1}}]]


async def _run_surface(
    script: str, mode: str, endpoint: str, answer: dict[str, Any]
) -> dict[str, Any]:
    command = ["node", script, mode, endpoint, json.dumps(answer)]
    with anyio.fail_after(60):
        done = await anyio.run_process(command, cwd=SCRATCH, check=False)
    assert done.returncode == 0, done.stderr.decode()
    printed: dict[str, Any] = json.loads(done.stdout)
    return printed
