"""The renderer's jsdom suite (``render.test.mjs``), on results the framework produced."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpfusion import UIBlock, response, tool_error, ui
from tests.browser.environment import unavailable
from tests.browser.hostile import hostile_result
from tests.browser.sample_app import app as sample

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
RENDERER = REPO / "src" / "mcpfusion" / "_renderer"
SCRATCH = REPO / ".renderer-node"
JSDOM_VERSION = "27.3.0"
"""Pinned: the newest jsdom that runs on Node 20."""


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """jsdom, installed from npm into ``.renderer-node/`` (gitignored) on first use."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        unavailable("Node.js and npm are not installed: the renderer's jsdom suite needs them")
    installed = SCRATCH / "node_modules" / "jsdom" / "package.json"
    if not installed.is_file() or json.loads(installed.read_text())["version"] != JSDOM_VERSION:
        SCRATCH.mkdir(exist_ok=True)
        (SCRATCH / "package.json").write_text('{"private": true}\n')
        subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--ignore-scripts",
                f"jsdom@{JSDOM_VERSION}",
            ],
            cwd=SCRATCH,
            check=True,
            capture_output=True,
            timeout=300,
        )
    return SCRATCH / "node_modules"


def fixtures() -> dict[str, Any]:
    """The results the suite renders, each made by the framework."""
    sample_call = anyio.run(sample.call_tool, "orders", {"action": "list_orders"})
    invalid = anyio.run(sample.call_tool, "orders", {"action": "list_orders", "status": "nope"})
    all_kinds = (
        response({"id": 1})
        .ui(
            ui.markdown("**hi**"),
            ui.table(["a"], [[1]]),
            ui.list(["x", "y"]),
            ui.summary("s"),
            ui.echarts({"series": []}),
            ui.mermaid("graph LR\n  a --> b"),
            ui.code_block("sql", "select 1"),
        )
        .directive("Answer briefly.")
        .rule("Amounts are in cents.")
        .suggest("orders.cancel", "Cancel <stale> orders")
        .build()
    )
    results = {
        "all_kinds": all_kinds,
        "table": sample_call,
        "bad_chart": response("x").ui(UIBlock("echarts", "```echarts\n{not json\n```")).build(),
        "diagram": response("x").ui(ui.mermaid("graph LR\n  placed --> paid")).build(),
        "code": response("x")
        .ui(
            ui.code_block("python", "print('</script>')\n# <domain_rules>"),
            ui.json({"a": [1, 2], "b": "<b>"}),
        )
        .build(),
        "tool_error": tool_error(
            "NOT_FOUND",
            "Order <ORD-9> does not exist.",
            recovery="Call orders.list_orders.",
            available_actions=["orders.list_orders"],
        ),
        "validation_error": invalid,
    }
    made = {name: result.to_mcp() for name, result in results.items()}
    return {**made, "hostile": hostile_result()}


def test_renderer_maps_results_to_the_dom(node_modules: Path, tmp_path: Path) -> None:
    """Every case of the renderer's jsdom suite passes on the framework's own results."""
    path = tmp_path / "fixtures.json"
    path.write_text(json.dumps(fixtures(), ensure_ascii=False), encoding="utf-8")
    env = {
        **os.environ,
        "MF_FIXTURES": str(path),
        "MF_RENDERER": str(RENDERER),
        "MF_NODE_MODULES": str(node_modules.parent),
    }
    done = subprocess.run(
        ["node", "--test", str(HERE / "render.test.mjs")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
