"""Unit tests of mcpfusion._tools.structured: output schemas, wrapping, checks and merging."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel

from mcpfusion import (
    DefinitionError,
    OutputMismatchError,
    error,
    success,
    success_structured,
)
from mcpfusion._tools.structured import OutputSchema, merged_output_schema


class Node(BaseModel):
    """A self-referencing model."""

    name: str
    children: list[Node] = []


class Money(BaseModel):
    """A small model."""

    cents: int


def test_self_referencing_model_is_an_object() -> None:
    """A model pydantic describes with a top-level $ref is still an unwrapped object."""
    schema = OutputSchema(Node, "t/a")
    assert not schema.wrapped and schema.keys == ("name", "children")
    assert schema.json_schema["type"] == "object" and "Node" in schema.json_schema["$defs"]


def test_wrapped_schema_keeps_defs_at_the_top() -> None:
    """A wrapped list of models keeps $defs at the root, where $ref resolves."""
    schema = OutputSchema(list[Money], "t/a").json_schema
    assert schema["properties"]["result"] == {"items": {"$ref": "#/$defs/Money"}, "type": "array"}
    assert "Money" in schema["$defs"]


def test_respond_and_select() -> None:
    """A value is validated, dumped in JSON mode and trimmed by `_select`."""
    schema = OutputSchema(Node, "t/a")
    result = schema.respond({"name": "root", "children": [{"name": "leaf"}]}, ["name"])
    assert result.structured_content == {"name": "root"}


def test_respond_rejects_a_mismatch() -> None:
    """A value that does not fit raises OutputMismatchError."""
    mismatch = r"^the value does not match the output schema: 1 validation error for Money\ncents\n"
    with pytest.raises(OutputMismatchError, match=mismatch):
        OutputSchema(Money, "t/a").respond({"cents": "lots"}, None)


@pytest.mark.parametrize(
    ("response", "mismatch"),
    [
        (success_structured({"result": 1}), None),
        (
            success_structured({"result": "x"}),
            r"^the value does not match the output schema: 1 validation error for int\n",
        ),
        (
            success_structured({"result": 1, "more": 2}),
            "^" + re.escape("structured content must be {'result': …}") + "$",
        ),
        (
            success(1),
            "^"
            + re.escape(
                "an action with an output schema must return its data or "
                "success_structured(...), not a response without structured content"
            )
            + "$",
        ),
    ],
)
def test_check_wrapped(response: Any, mismatch: str | None) -> None:
    """A handler-built response must carry {"result": value} fitting the schema."""
    schema = OutputSchema(int, "t/a")
    if mismatch is None:
        assert schema.resend(response, None).to_mcp() == response.to_mcp()
    else:
        with pytest.raises(OutputMismatchError, match=mismatch):
            schema.resend(response, None)


def test_unusable_schema_is_a_definition_error() -> None:
    """A schema pydantic cannot describe fails at definition time."""
    with pytest.raises(DefinitionError, match="output_schema"):
        OutputSchema(object(), "t/a")


def test_merge_renames_colliding_defs() -> None:
    """Two different definitions with one name are both kept, the second renamed."""
    a = {"type": "object", "properties": {"x": {"$ref": "#/$defs/M"}}, "$defs": {"M": {"a": 1}}}
    b = {"type": "object", "properties": {"y": {"$ref": "#/$defs/M"}}, "$defs": {"M": {"b": 1}}}
    assert merged_output_schema([a, b]) == {
        "type": "object",
        "anyOf": [
            {"type": "object", "properties": {"x": {"$ref": "#/$defs/M"}}},
            {"type": "object", "properties": {"y": {"$ref": "#/$defs/M2"}}},
        ],
        "$defs": {"M": {"a": 1}, "M2": {"b": 1}},
    }


def test_merge_of_equal_schemas_is_the_schema() -> None:
    """Equal schemas merge to themselves."""
    schema = OutputSchema(Money, "t/a").json_schema
    assert merged_output_schema([schema, dict(schema)]) is schema


def test_resend_passes_an_error_untouched() -> None:
    """An error response a handler built is sent as it is, without structured content."""
    failure = error("Nope.")
    assert OutputSchema(Money, "t/a").resend(failure, ["cents"]) is failure


def test_merge_lists_each_distinct_branch_once() -> None:
    """Actions sharing one output schema add one anyOf branch, in first-seen order."""
    money = OutputSchema(Money, "t/a").json_schema
    numbers = OutputSchema(list[int], "t/b").json_schema
    merged = merged_output_schema([money, money, numbers, money, money])
    assert merged["anyOf"] == [money, numbers]
