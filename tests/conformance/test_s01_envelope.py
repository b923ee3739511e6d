"""SPEC §1: the CallToolResult envelope of every response kind."""

from __future__ import annotations

import json

import pytest

from mcpfusion import (
    ToolResponse,
    UIBlock,
    error,
    required,
    response,
    success,
    success_structured,
    tool_error,
    toon_success,
)
from mcpfusion._errors import Severity


def _text_items(result: dict[str, object]) -> list[dict[str, object]]:
    content = result["content"]
    assert isinstance(content, list)
    return content


def test_one_text_item_per_block_in_order() -> None:
    """SPEC §1: content holds one {"type": "text", "text": ...} item per block, in block order."""
    built = response({"id": 1}).ui(UIBlock("markdown", "x")).rule("r").build()
    result = built.to_mcp()
    assert _text_items(result) == [{"type": "text", "text": block} for block in built.blocks]
    assert len(built.blocks) == 3


@pytest.mark.parametrize(
    "result",
    [
        success({"a": 1}),
        success(None),
        success(""),
        toon_success([{"a": 1}]),
        response([]).build(),
        success_structured({"a": 1}),
        error("boom"),
        required("invoice_id"),
        tool_error("X", "m", severity="warning"),
    ],
)
def test_content_is_never_empty(result: ToolResponse) -> None:
    """SPEC §1: every response helper yields at least one text item."""
    items = _text_items(result.to_mcp())
    assert items
    assert all(item["type"] == "text" and isinstance(item["text"], str) for item in items)


def test_a_response_without_blocks_is_refused() -> None:
    """SPEC §1: content is never empty, so a ToolResponse cannot be made without blocks."""
    with pytest.raises(ValueError, match=r"^a tool response needs at least one block$"):
        ToolResponse(())


def test_success_is_not_an_error_and_has_no_structured_content() -> None:
    """SPEC §1: a success has isError false and no structuredContent key."""
    result = success({"a": 1}).to_mcp()
    assert result["isError"] is False
    assert "structuredContent" not in result


@pytest.mark.parametrize("severity", ["error", "critical"])
def test_error_envelopes_set_is_error(severity: Severity) -> None:
    """SPEC §1: isError is true on error envelopes of severity error and critical."""
    result = tool_error("X", "m", severity=severity).to_mcp()
    assert result["isError"] is True
    assert error("m").to_mcp()["isError"] is True
    assert required("f").to_mcp()["isError"] is True


def test_warning_is_not_an_error() -> None:
    """SPEC §1: a warning envelope has isError false."""
    assert tool_error("X", "m", severity="warning").to_mcp()["isError"] is False


def test_structured_content_only_for_structured_success() -> None:
    """SPEC §1: structuredContent is present only for success_structured."""
    result = success_structured({"a": 1}).to_mcp()
    assert result["structuredContent"] == {"a": 1}
    assert set(result) == {"content", "isError", "structuredContent"}
    assert set(success({"a": 1}).to_mcp()) == {"content", "isError"}


def test_mcp_dict_is_plain_json() -> None:
    """SPEC §1: the MCP result dict is JSON-compatible as it stands."""
    built = response({"a": [1, 2]}).rule("r").suggest("t.a", "why").build()
    result = built.to_mcp()
    assert json.loads(json.dumps(result)) == result
