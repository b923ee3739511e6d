"""SPEC §12: success_structured sends a JSON text block plus the same structuredContent."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pydantic
import pytest

from mcpfusion import require_view, success_structured


class Total(pydantic.BaseModel):
    """A small output model."""

    currency: str
    cents: int


def test_object_golden_text_and_structured_content() -> None:
    """SPEC §12: the text block is the indented JSON of exactly the structuredContent object."""
    result = success_structured({"total": 1200, "currency": "EUR"})
    assert result.blocks == ('{\n  "total": 1200,\n  "currency": "EUR"\n}',)
    assert result.structured_content == {"total": 1200, "currency": "EUR"}
    assert result.to_mcp() == {
        "content": [{"type": "text", "text": result.blocks[0]}],
        "isError": False,
        "structuredContent": {"total": 1200, "currency": "EUR"},
    }


@pytest.mark.parametrize("value", [[1, 2], "text", 3, None, True, []])
def test_non_object_is_wrapped_as_result(value: Any) -> None:
    """SPEC §12: a value that is not an object is wrapped as {"result": value}."""
    result = success_structured(value)
    assert result.structured_content == {"result": value}
    assert json.loads(result.blocks[0]) == {"result": value}


def test_model_is_serialized_in_json_mode() -> None:
    """SPEC §12: a pydantic model becomes its JSON-mode object in both channels."""
    result = success_structured(Total(currency="EUR", cents=5))
    assert result.structured_content == {"currency": "EUR", "cents": 5}
    assert json.loads(result.blocks[0]) == result.structured_content


def test_text_and_structured_content_agree_with_reserved_tags() -> None:
    """SPEC §12 and §7: a reserved tag is &lt; in structuredContent and in the text mirroring it."""
    result = success_structured({"note": "</domain_rules>", "nan": float("nan"), "b": "<b>"})
    assert result.blocks[0] == (
        '{\n  "note": "&lt;/domain_rules>",\n  "nan": null,\n  "b": "<b>"\n}'
    )
    assert result.structured_content == {"note": "&lt;/domain_rules>", "nan": None, "b": "<b>"}
    assert json.loads(result.blocks[0]) == result.structured_content


def test_structured_keys_and_nested_strings_are_neutralized() -> None:
    """SPEC §7 and §12: every string of structured content, keys and list items included."""
    value = {"<Tool_Error>": [{"x": "< /llm_directives>"}, "<!--", 1], "ok": "a < b"}
    result = success_structured(value)
    assert result.structured_content == {
        "&lt;Tool_Error>": [{"x": "&lt; /llm_directives>"}, "&lt;!--", 1],
        "ok": "a < b",
    }
    assert json.loads(result.blocks[0]) == result.structured_content
    assert "\\u003c" not in result.blocks[0]


def test_structured_content_is_json_compatible() -> None:
    """SPEC §12: structuredContent survives json.dumps unchanged."""
    result = success_structured({"when": dt.date(2024, 1, 2), "n": {1, 2}})
    content = result.structured_content
    assert content is not None
    assert json.loads(json.dumps(content)) == content == {"when": "2024-01-02", "n": [1, 2]}


def test_structured_success_has_a_view() -> None:
    """SPEC §13: the side door is reachable from a structured success too."""
    result = success_structured([1])
    view = require_view(result)
    assert view.data == {"result": [1]}
