"""Unit tests of mcpfusion._tools.lean: tool definitions without what tells the model nothing."""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from mcpfusion import Fusion
from mcpfusion._tools.lean import lean_annotations, lean_schema
from mcpfusion.testing import FusionTester


class Channel(enum.Enum):
    """How a reminder is sent."""

    EMAIL = "email"
    SMS = "sms"


class Report(BaseModel):
    """A structured result."""

    total: int


def billing(definitions: Any, exposition: Any = "grouped") -> Fusion:
    """A tool with an optional filter, a required id, an enum and an output schema."""
    app = Fusion("srv", definitions=definitions)
    tool = app.tool("billing", exposition=exposition)

    @tool.action(read_only=True)
    def find(
        status: Annotated[Literal["paid", "due"] | None, Field(description="Only this.")] = None,
    ) -> str:
        return f"status={status}"

    @tool.action(idempotent=True)
    def remind(invoice_id: str, channel: Channel = Channel.EMAIL) -> None: ...

    return app


def test_lean_grouped_schema() -> None:
    """Optional parameters are plain types; no boilerplate, no derived titles, no enum types."""
    [listed] = billing("lean").list_tools()
    assert listed["inputSchema"] == {
        "type": "object",
        "properties": {
            "action": {"enum": ["find", "remind"]},
            "status": {"description": "Only this. Used by: find.", "enum": ["paid", "due"]},
            "invoice_id": {"type": "string"},
            "channel": {
                "description": "Used by: remind.",
                "$ref": "#/$defs/Channel",
                "default": "email",
            },
        },
        "required": ["action"],
        "additionalProperties": False,
        "$defs": {"Channel": {"description": "How a reminder is sent.", "enum": ["email", "sms"]}},
    }
    assert listed["annotations"] == {"destructiveHint": False, "idempotentHint": True}
    assert listed["description"].endswith("- remind: Requires: invoice_id.")


def test_lean_is_smaller_and_full_is_unchanged() -> None:
    """The default stays the full form; the lean one says the same in fewer characters."""
    full, lean = billing("full").list_tools()[0], billing("lean").list_tools()[0]
    assert full["inputSchema"]["properties"]["status"]["anyOf"][1] == {"type": "null"}
    assert len(str(lean)) < len(str(full))


def test_null_is_still_accepted_for_a_lean_optional_parameter() -> None:
    """Sending null for an optional parameter means absent, as before."""
    tester = FusionTester(billing("lean"))
    assert tester.call_sync("billing", "find", status=None).text == "status=None"
    assert tester.call_sync("billing", "find", status="due").text == "status=due"


def test_lean_flat_schema() -> None:
    """Flat tools get the same treatment, with their own required list."""
    find, remind = billing("lean", "flat").list_tools()
    assert find["inputSchema"]["properties"] == {
        "status": {"description": "Only this.", "enum": ["paid", "due"]}
    }
    assert find["annotations"] == {"readOnlyHint": True}
    assert remind["inputSchema"]["required"] == ["invoice_id"]


def test_lean_output_schema_and_annotations() -> None:
    """Output schemas lose derived titles; annotations keep what differs from MCP's defaults."""
    app = Fusion("srv", definitions="lean")
    app.tool("r").action("get", output_schema=Report, destructive=True)(lambda: Report(total=1))
    [listed] = app.list_tools()
    assert listed["outputSchema"] == {
        "description": "A structured result.",
        "properties": {"total": {"type": "integer"}},
        "required": ["total"],
        "type": "object",
    }
    assert "annotations" not in listed


def test_lean_schema_keeps_what_carries_meaning() -> None:
    """An explicit title, a mixed enum and property names that look like keywords stay."""
    schema = {
        "properties": {"title": {"type": "string"}, "type": {"enum": [1, "a"], "type": "string"}},
        "$defs": {"A": {"title": "Something else", "enum": [True], "type": "boolean"}},
    }
    assert lean_schema(schema) == {
        "properties": {"title": {"type": "string"}, "type": {"enum": [1, "a"], "type": "string"}},
        "$defs": {"A": {"title": "Something else", "enum": [True]}},
    }
    assert lean_annotations(False, True, False) == {}


class Leaf(BaseModel):
    """A leaf."""

    n: int


class Tree(BaseModel):
    """A recursive node."""

    children: list[Tree] = []


class Holder(BaseModel):
    """Uses Leaf once, Tree (recursive) and Leaf again through a list."""

    one: Leaf
    tree: Tree


def test_a_definition_referenced_once_is_written_in_place() -> None:
    """Lean inlines a $defs entry used once; one used twice or recursively keeps its $ref."""
    lean = lean_schema(Holder.model_json_schema(), "Holder")
    assert lean["properties"]["one"] == {
        "description": "A leaf.",
        "properties": {"n": {"title": "N", "type": "integer"}},
        "required": ["n"],
        "type": "object",
    }
    assert lean["properties"]["tree"] == {"$ref": "#/$defs/Tree"}
    assert list(lean["$defs"]) == ["Tree"]
    twice = {"properties": {"a": {"$ref": "#/$defs/L"}, "b": {"$ref": "#/$defs/L"}}}
    twice["$defs"] = {"L": {"type": "integer"}}
    assert lean_schema(twice) == twice
    defaulted: dict[str, Any] = {"properties": {"c": {"$ref": "#/$defs/C", "default": "x"}}}
    defaulted["$defs"] = {"C": {"enum": ["x", "y"]}}
    assert lean_schema(defaulted) == {"properties": {"c": {"enum": ["x", "y"], "default": "x"}}}
    clash: dict[str, Any] = {"properties": {"c": {"$ref": "#/$defs/C", "description": "Field."}}}
    clash["$defs"] = {"C": {"description": "Class.", "enum": ["x"]}}
    assert lean_schema(clash) == clash
    looped = {  # A once (from B), B twice (root and A): A written inside B's definition
        "properties": {"b": {"$ref": "#/$defs/B"}},
        "$defs": {
            "A": {"properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"properties": {"a": {"$ref": "#/$defs/A"}}},
        },
    }
    assert lean_schema(looped) == {
        "properties": {"b": {"$ref": "#/$defs/B"}},
        "$defs": {"B": {"properties": {"a": {"properties": {"b": {"$ref": "#/$defs/B"}}}}}},
    }
