"""Schema dialects over real transports: a client naming itself a known host gets its dialect."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from google.genai import types as gemini
from mcp.types import Implementation

from mcpfusion._tools.dialects import in_dialect
from tests.e2e.conftest import Connect

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


async def listed(connect: Connect, client: str) -> dict[str, Any]:
    """The input schemas a client named ``client`` is listed, by tool name."""
    with anyio.fail_after(60):
        async with connect(client_info=Implementation(name=client, version="1.0")) as session:
            tools = (await session.list_tools()).tools
    return {tool.name: tool.input_schema for tool in tools}


@pytest.mark.parametrize("connect", ["stdio", "http"], indirect=True)
async def test_gemini_cli_is_listed_gemini_schemas_and_others_json_schema(
    connect: Connect, app: Any
) -> None:
    """By clientInfo name: Gemini CLI gets the subset its API takes, an unknown client MCP's."""
    gemini_cli = await listed(connect, "gemini-cli-mcp-client")
    other = await listed(connect, "some-agent")
    for tool in app.list_tools():
        assert other[tool["name"]] == tool["inputSchema"]
        assert gemini_cli[tool["name"]] == in_dialect(tool, "gemini")["inputSchema"]
        declaration = {"name": tool["name"], "parameters": gemini_cli[tool["name"]]}
        gemini.FunctionDeclaration.model_validate(declaration)
