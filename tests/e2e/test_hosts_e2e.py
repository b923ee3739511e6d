"""Hosts that ignore `audience`, over real HTTP: Claude Code gets no UI block for the user."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import Implementation

from mcpfusion import HttpOptions
from mcpfusion.server import asgi_app
from tests.e2e.auth_servers import serving
from tests.unit._app.test_hosts import table_app

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


async def content(url: str, client: str) -> list[Any]:
    """The content of ``rows.names`` as the client named ``client`` receives it."""
    with anyio.fail_after(60):
        async with Client(url, client_info=Implementation(name=client, version="1.0")) as session:
            result = await session.call_tool("rows", {"action": "names"})
    return list(result.content)


async def test_claude_code_gets_the_data_and_other_hosts_the_table_too() -> None:
    """By clientInfo name: the table for the user is left out for Claude Code only."""
    app = table_app()
    async with serving(lambda port: asgi_app(app, HttpOptions(json_response=True))) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        claude = await content(url, "claude-code")
        other = await content(url, "some-agent")
    assert len(claude) == 1 and claude[0].annotations is None
    assert len(other) == 2 and other[1].annotations.audience == ["user"]
    assert claude[0].text == other[0].text
