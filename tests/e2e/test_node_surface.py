"""The TypeScript SDK reads the billing example's resources, prompts and completions."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import toon_format

from examples.billing import demo_keys
from tests.e2e.billing_session import ROOT, HttpServer
from tests.e2e.servers import HERE
from tests.e2e.test_node_client import SCRATCH, node_client

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

FORBIDDEN_FIELDS = ("tenant_id", "internal_notes", "password_hash", "api_key", "cost_cents")
__all__ = ["node_client"]  # the fixture, used by name below


@pytest.fixture(scope="module")
def node_surface(node_client: Path) -> Path:
    """The surface script beside the SDK that ``node_client`` installed."""
    script = SCRATCH / "node_surface.mjs"
    script.write_text((HERE / "node_surface.mjs").read_text())
    return script


@pytest.fixture(scope="module")
def billing_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The billing example over streamable HTTP on a fresh database."""
    server = HttpServer.start(tmp_path_factory.mktemp("node-http") / "billing.db")
    try:
        yield server.url
    finally:
        server.stop()


async def run(script: Path, mode: str, endpoint: str, token: str = "-") -> dict[str, Any]:
    """Runs the Node script; returns what it printed."""
    command = ["node", str(script), mode, endpoint, token]
    with anyio.fail_after(60):
        done = await anyio.run_process(command, cwd=SCRATCH, check=False)
    assert done.returncode == 0, done.stderr.decode()
    printed: dict[str, Any] = json.loads(done.stdout)
    return printed


def check(printed: dict[str, Any]) -> None:
    """What every transport must show the TypeScript client."""
    caps = printed["capabilities"]
    assert {"resources", "prompts", "completions"} <= set(caps)
    templates = printed["templates"]["result"]["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == [
        "ui://mcpfusion/result.html/diagrams/{part}",
        "billing://invoices/{invoice_id}",
    ]
    contents = printed["read"]["result"]["contents"]
    assert contents[0]["mimeType"] == "text/toon"  # the example's default data format
    assert toon_format.decode(contents[0]["text"])["id"] == "INV-00001"
    assert printed["missing"]["error"]["code"] == -32602
    assert "does not exist" in printed["missing"]["error"]["message"]
    assert printed["prompts"]["result"]["prompts"][0]["name"] == "collections_call"
    messages = printed["prompt"]["result"]["messages"]
    assert messages[0]["content"]["text"].startswith("Prepare a collections call")
    bad = printed["badPrompt"]["error"]
    assert bad["code"] == -32602 and "customer_id: String should match pattern" in bad["message"]
    values = printed["completion"]["result"]["completion"]["values"]
    assert values == [f"CUS-{n:04d}" for n in range(10, 20)]
    blob = json.dumps(printed)
    assert not [name for name in FORBIDDEN_FIELDS if name in blob]


async def test_typescript_client_over_stdio(node_surface: Path, tmp_path: Path) -> None:
    """Over stdio, as the local operator."""
    command = [sys.executable, "-m", "examples.billing", "--db", str(tmp_path / "b.db")]
    # The script runs in SCRATCH; the example is imported from the repository.
    wrapper = ["env", f"PYTHONPATH={ROOT}", *command]
    check(await run(node_surface, "stdio", json.dumps(wrapper)))


async def test_typescript_client_over_http(node_surface: Path, billing_http: str) -> None:
    """Over streamable HTTP, with Northwind's read-only API key."""
    check(await run(node_surface, "http", billing_http, demo_keys.NORTHWIND_READ))
