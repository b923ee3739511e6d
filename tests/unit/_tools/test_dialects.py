"""Unit tests of mcpfusion._tools.dialects: each provider's SDK accepts the tools as sent."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from enum import IntEnum
from pathlib import Path
from typing import Any, Literal

import anthropic.types
import pytest
from google.genai import types as gemini
from openai.lib._pydantic import _ensure_strict_json_schema
from openai.types.shared_params import FunctionDefinition
from pydantic import BaseModel, Field, TypeAdapter

from examples.billing.server import create_app
from mcpfusion import DefinitionError, Fusion
from mcpfusion._tools.dialects import KNOWN_CLIENTS, in_dialect
from mcpfusion.testing import FusionTester
from tests.conformance.sample_app import app as sample_app

_OPENAI_UNSUPPORTED = {
    "minLength", "maxLength", "uniqueItems", "default", "oneOf", "allOf", "not",
    "patternProperties", "propertyNames", "minProperties", "maxProperties", "examples",
}  # fmt: skip
"""Keywords OpenAI's strict mode rejects (its structured-outputs guide)."""


def nodes(schema: Any) -> Iterator[dict[str, Any]]:
    """Every schema object inside ``schema``, itself included."""
    if isinstance(schema, dict):
        yield schema
        for key, value in schema.items():
            if key in ("properties", "$defs") and isinstance(value, dict):
                for child in value.values():
                    yield from nodes(child)
            elif key != "enum":
                yield from nodes(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from nodes(item)


def tools(tmp: Path) -> list[dict[str, Any]]:
    """Every tool of the billing example (lean and full) and of the conformance sample app."""
    lean = create_app(tmp / "lean.db").list_tools()
    full = create_app(tmp / "full.db", definitions="full").list_tools()
    return [*lean, *full, *sample_app.list_tools(), *Shapes.list_tools()]


def check_openai(tool: dict[str, Any]) -> None:
    """OpenAI's rules: its SDK's strict pass changes nothing; closed, fully required objects."""
    schema = tool["inputSchema"]
    again = _ensure_strict_json_schema(copy.deepcopy(schema), path=(), root=copy.deepcopy(schema))
    assert again == schema
    for node in nodes(schema):
        if node.get("type") == "object" or "properties" in node:
            assert node["additionalProperties"] is False
            assert node["required"] == list(node.get("properties", {}))
        assert not node.keys() & _OPENAI_UNSUPPORTED, node
        assert not ("$ref" in node and len(node) > 1), node
    definition = {"name": tool["name"], "parameters": schema, "strict": True}
    TypeAdapter(FunctionDefinition).validate_python(definition)


def check_gemini(tool: dict[str, Any]) -> None:
    """Gemini's function-declaration model (extra keys forbidden) takes it; no $ref at all."""
    schema = tool["inputSchema"]
    gemini.FunctionDeclaration.model_validate(
        {"name": tool["name"], "description": tool["description"], "parameters": schema}
    )
    for node in nodes(schema):
        assert not node.keys() & {"$ref", "$defs", "additionalProperties", "oneOf", "const"}
        assert all(isinstance(v, str) for v in node.get("enum", [])), node


def check_anthropic(tool: dict[str, Any]) -> None:
    """Anthropic's tool parameter type takes it, an object schema at the top."""
    param = {"name": tool["name"], "description": tool["description"]}
    TypeAdapter(anthropic.types.ToolParam).validate_python(
        {**param, "input_schema": tool["inputSchema"]}
    )
    assert tool["inputSchema"]["type"] == "object"


class Level(IntEnum):
    """An enum of numbers, which Gemini cannot list."""

    LOW = 1
    HIGH = 2


class Node(BaseModel):
    """A recursive model."""

    name: str
    children: list[Node] = []


class Address(BaseModel):
    """A nested model with an optional field."""

    city: str
    zip_code: str = Field("", max_length=10)


Shapes = Fusion("shapes", definitions="full")
_shapes = Shapes.tool("shapes", exposition="flat")


@_shapes.action
def everything(
    tree: Node,
    level: Level,
    kind: Literal["a"],
    address: Address,
    url: str = Field("https://x.test", json_schema_extra={"format": "uri"}),
    ratio: float = Field(0.5, gt=0, lt=1, multiple_of=0.1),
    tags: frozenset[str] = frozenset(),
    extra: dict[str, int] | None = None,
) -> str:
    """Takes every shape the dialects treat."""
    return "ok"


@pytest.mark.parametrize(
    ("dialect", "check"),
    [("openai", check_openai), ("gemini", check_gemini), ("anthropic", check_anthropic)],
)
def test_every_tool_passes_the_providers_validator(
    dialect: Any, check: Any, tmp_path: Path
) -> None:
    """Every billing, conformance-sample and shapes tool, converted, passes that SDK's checks."""
    for tool in tools(tmp_path):
        check(in_dialect(tool, dialect))


def test_the_mcp_dialect_sends_the_schema_as_written(tmp_path: Path) -> None:
    """The default dialect changes nothing."""
    for tool in tools(tmp_path):
        assert in_dialect(tool, "mcp") is tool


def shape(dialect: Any) -> dict[str, Any]:
    """The shapes tool's properties in ``dialect``."""
    [tool] = Shapes.list_tools()
    properties: dict[str, Any] = in_dialect(tool, dialect)["inputSchema"]["properties"]
    return properties


def test_openai_makes_optional_parameters_nullable_and_describes_what_it_drops() -> None:
    """Optional → nullable; formats, uniqueItems, maps and defaults move into descriptions."""
    properties = shape("openai")
    assert properties["url"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "description": 'Default "https://x.test"; format uri.',
    }
    assert properties["tags"]["description"] == "Default []; no repeated items."
    assert properties["kind"] == {"enum": ["a"], "type": "string"}
    assert properties["extra"]["anyOf"][0]["description"] == (
        'An object of any keys, each value {"type": "integer"}.'
    )
    address = in_dialect(Shapes.list_tools()[0], "openai")["inputSchema"]["$defs"]["Address"]
    assert address["required"] == ["city", "zip_code"]
    assert address["properties"]["zip_code"]["description"] == (
        'Default ""; at most 10 characters.'
    )


def test_gemini_writes_refs_in_place_and_describes_what_its_subset_lacks() -> None:
    """Refs inlined (a recursion named), number enums and bounds told, null as nullable."""
    properties = shape("gemini")
    children = properties["tree"]["properties"]["children"]["items"]
    assert children == {"type": "object", "description": "A Node, as above."}
    assert properties["level"]["description"].endswith("One of 1, 2.")
    assert properties["kind"]["enum"] == ["a"]
    assert properties["ratio"]["description"] == ("Less than 1; more than 0; a multiple of 0.1.")
    assert properties["extra"]["nullable"] is True
    assert properties["url"] == {
        "default": "https://x.test",
        "type": "string",
        "description": "Format uri.",
    }


def test_an_unknown_dialect_fails_at_definition() -> None:
    """schema_dialect= and client_dialects= name known dialects, or the app is refused."""
    with pytest.raises(DefinitionError, match="schema_dialect is one of mcp, openai"):
        Fusion("x", schema_dialect="llama")  # type: ignore[arg-type]
    with pytest.raises(DefinitionError, match=r"client_dialects\['me'\] is one of"):
        Fusion("x", client_dialects={"me": "llama"})  # type: ignore[dict-item]


def test_each_client_gets_its_dialect_unless_the_app_fixes_one() -> None:
    """Known hosts by clientInfo name, overridable; an app's schema_dialect wins for all."""
    app = Fusion("x", client_dialects={"my-agent": "gemini", "claude-code": "mcp"})
    assert app.dialect_for("gemini-cli-mcp-client") == KNOWN_CLIENTS["gemini-cli-mcp-client"]
    assert app.dialect_for("my-agent") == "gemini"
    assert app.dialect_for("claude-code") == "mcp"
    assert app.dialect_for(None) == "mcp"
    assert Fusion("y", schema_dialect="openai").dialect_for("gemini-cli-mcp-client") == "openai"


@pytest.mark.anyio
async def test_null_means_absent_where_the_strict_dialect_made_it_nullable(tmp_path: Path) -> None:
    """A strict client sends every property: nulls of absent parameters are read as absent."""
    app = create_app(tmp_path / "b.db")
    [billing] = [t for t in app.list_tools() if t["name"] == "billing"]
    sent = dict.fromkeys(in_dialect(billing, "openai")["inputSchema"]["properties"])
    async with FusionTester(app) as tester:
        listed = await tester.call_tool("billing", {**sent, "action": "list_invoices"})
        missing = await tester.call_tool("billing", {**sent, "action": "get_invoice"})
        unknown = await tester.call_tool("billing", {"action": "list_invoices", "bogus": None})
    assert not listed.is_error, listed.text
    assert missing.error is not None and missing.error.code == "VALIDATION_ERROR"
    assert unknown.error is not None and unknown.error.code == "VALIDATION_ERROR"
