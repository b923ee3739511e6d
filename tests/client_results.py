"""Tool results as the official MCP client returns them: mcpfusion answers in text items."""

from __future__ import annotations

from collections.abc import Sequence

from mcp.types import CallToolResult, ContentBlock, TextContent


def texts(content: Sequence[ContentBlock]) -> list[str]:
    """The text of each content item; an item of any other kind fails the test."""
    found = []
    for item in content:
        assert isinstance(item, TextContent), f"a {item.type} item, not text"
        found.append(item.text)
    return found


def first_text(result: CallToolResult) -> str:
    """The text of a result's first content item: its data block or its error."""
    [text] = texts(result.content[:1])
    return text
