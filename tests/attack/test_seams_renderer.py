"""The MCP App over real streamable HTTP with the official client: every read fits an SSE event.

The App document inlined mermaid and the full echarts (6.77 MB); the official Python
client, like FastMCP's, refuses an SSE event over 1 MiB, so on 2025-11-25 (whose answers
are SSE events) ``resources/read`` of the App failed. The document now leaves the diagram
library out and reads it in parts, each a resource that fits one event.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from typing import Any

import anyio
import pytest
from mcp import Client, types

from mcpfusion import Fusion, response, ui
from mcpfusion._renderer import diagram_parts
from tests.e2e.servers import http_server

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TARGET = f"{__file__}:app"
"""This module's app, as ``mcpfusion run`` names it."""
APP_URI = "ui://mcpfusion/result.html"
SSE_EVENT_LIMIT = 1024 * 1024
"""The official client's (and FastMCP's) largest SSE event."""
MODES = ("legacy", "2026-07-28")
"""2025-11-25 through the initialize handshake (answers as SSE events), and 2026-07-28."""

_PARTS = re.compile(r'<meta name="mcpfusion-diagram-parts" content="([^"]*)">')
_POLICY = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')

app = Fusion("seams-renderer", version="1.0.0")
app.enable_ui_app()


@app.tool("flow").action("show", read_only=True)
def show() -> Any:
    """A diagram: the kind of result that makes the App read the diagram library."""
    return response("x").ui(ui.mermaid("graph LR\n  placed --> paid")).build()


@pytest.fixture(scope="module")
async def url() -> Any:
    """This module's app served by ``mcpfusion run --http`` on 127.0.0.1."""
    async with http_server(target=TARGET) as served:
        yield served


async def read_text(client: Client, uri: str) -> str:
    """The one text content of a ``resources/read``."""
    [content] = (await client.read_resource(uri)).contents
    assert isinstance(content, types.TextResourceContents)
    return content.text


@pytest.mark.parametrize("mode", MODES)
async def test_the_app_document_and_its_diagram_parts_each_fit_an_sse_event(
    url: str, mode: str
) -> None:
    """The App reads under 1 MiB; the parts it names read too and join into what it allows."""
    with anyio.fail_after(120):
        async with Client(url, mode=mode) as client:
            document = await read_text(client, APP_URI)
            assert document.startswith("<!DOCTYPE html>")
            assert len(json.dumps(document).encode()) < SSE_EVENT_LIMIT
            [named] = _PARTS.findall(document)
            uris = json.loads(html.unescape(named))
            assert uris == [f"{APP_URI}/diagrams/{n}" for n in range(1, len(uris) + 1)]
            parts = [await read_text(client, uri) for uri in uris]
    assert tuple(parts) == diagram_parts()
    digest = hashlib.sha256("".join(parts).encode()).digest()
    [policy] = _POLICY.findall(document)
    assert f"'sha256-{base64.b64encode(digest).decode()}'" in policy


async def test_the_parts_are_one_template_beside_the_app(url: str) -> None:
    """resources/list shows the App alone; templates/list the parts' template."""
    with anyio.fail_after(60):
        async with Client(url, mode="legacy") as client:
            listed = (await client.list_resources()).resources
            templates = (await client.list_resource_templates()).resource_templates
    assert [r.uri for r in listed] == [APP_URI]
    assert [t.uri_template for t in templates] == [f"{APP_URI}/diagrams/{{part}}"]
