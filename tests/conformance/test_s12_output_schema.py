"""SPEC §12 on tools: output_schema advertised as outputSchema and checked before sending."""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from mcpfusion import (
    DefinitionError,
    ToolError,
    response,
    success,
    success_structured,
    tool_error,
)
from mcpfusion._app.app import Fusion
from mcpfusion._present.response import ToolResponse
from mcpfusion.testing import FusionTester
from tests.conformance.sample_app import PINNED

pytestmark = pytest.mark.anyio

NO_RETRY = (
    "<recovery>This is a defect on the server side: retrying the same call will not help. "
    "Tell the user this action is unavailable.</recovery>"
)


class Total(BaseModel):
    """An output model."""

    currency: str
    cents: int


@dataclasses.dataclass
class TotalRecord:
    """A dataclass with the same fields."""

    currency: str
    cents: int


def _app(value: Any, schema: Any = Total) -> Fusion:
    app = Fusion("t", **PINNED)
    app.tool("t").action("a", output_schema=schema)(lambda: value)
    return app


def test_output_schema_is_advertised() -> None:
    """SPEC §12: output_schema=Model appears as outputSchema in tools/list."""
    assert _app(None).list_tools()[0]["outputSchema"] == {
        "description": "An output model.",
        "properties": {"currency": {"type": "string"}, "cents": {"type": "integer"}},
        "required": ["currency", "cents"],
        "title": "Total",
        "type": "object",
    }


def test_non_object_schema_is_wrapped() -> None:
    """SPEC §12: a non-object output is advertised as {"result": ...}."""
    assert _app(None, list[int]).list_tools()[0]["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"items": {"type": "integer"}, "type": "array"}},
        "required": ["result"],
    }


@pytest.mark.parametrize(
    "value",
    [Total(currency="EUR", cents=5), {"currency": "EUR", "cents": 5}, TotalRecord("EUR", 5)],
    ids=["model", "dict", "dataclass"],
)
async def test_plain_value_becomes_structured(value: Any) -> None:
    """SPEC §12: a handler's value is sent as text plus the same structuredContent."""
    result = await FusionTester(_app(value)).call("t", "a")
    assert result.raw == {
        "content": [{"type": "text", "text": '{\n  "currency": "EUR",\n  "cents": 5\n}'}],
        "isError": False,
        "structuredContent": {"currency": "EUR", "cents": 5},
    }


async def test_wrapped_value_text_matches_structured_content() -> None:
    """SPEC §12: a wrapped value's text is the JSON of exactly the structuredContent."""
    result = await FusionTester(_app([1, 2], list[int])).call("t", "a")
    assert result.structured_content == {"result": [1, 2]}
    assert json.loads(result.blocks[0]) == result.structured_content


async def test_undeclared_fields_are_not_sent() -> None:
    """SPEC §12: the value sent is the schema's view of what the handler returned."""
    result = await FusionTester(_app({"currency": "EUR", "cents": 5, "secret": 1})).call("t", "a")
    assert result.structured_content == {"currency": "EUR", "cents": 5}


async def test_success_structured_return_is_checked() -> None:
    """SPEC §12: a handler's own success_structured passes when it fits the schema."""
    value = success_structured({"currency": "EUR", "cents": 5})
    result = await FusionTester(_app(value)).call("t", "a")
    assert result.raw == value.to_mcp()


@pytest.mark.parametrize(
    "value",
    [
        success_structured({"currency": "EUR", "cents": 5, "extra": "secret"}),
        ToolResponse(("hand-made",), structured_content={"currency": "EUR", "cents": 5, "x": 1}),
    ],
    ids=["success_structured", "tool-response"],
)
async def test_handler_built_structured_content_is_the_schemas_view(value: Any) -> None:
    """SPEC §12: structured content a handler built is sent as the schema's dump, text its JSON."""
    result = await FusionTester(_app(value)).call("t", "a")
    assert result.raw == {
        "content": [{"type": "text", "text": '{\n  "currency": "EUR",\n  "cents": 5\n}'}],
        "isError": False,
        "structuredContent": {"currency": "EUR", "cents": 5},
    }


async def test_select_trims_handler_built_structured_content() -> None:
    """SPEC §11/§12: `_select` trims structured content the handler built itself too."""
    app = Fusion("t", **PINNED)
    built = success_structured({"currency": "EUR", "cents": 5})
    app.tool("t").enable_select().action("a", output_schema=Total)(lambda: built)
    result = await FusionTester(app).call("t", "a", _select=["cents"])
    assert result.structured_content == {"cents": 5}
    assert result.blocks == ('{\n  "cents": 5\n}',)


@pytest.mark.parametrize(
    "value",
    [
        {"currency": "EUR"},
        {"currency": "EUR", "cents": "many"},
        success_structured({"cents": 5}),
        success({"currency": "EUR", "cents": 5}),
        response({"currency": "EUR", "cents": 5}),
        None,
    ],
    ids=["missing", "wrong-type", "bad-structured", "no-structured", "builder", "none"],
)
async def test_mismatch_is_internal_error(value: Any, caplog: pytest.LogCaptureFixture) -> None:
    """SPEC §12: structured output that breaks its schema is INTERNAL_ERROR, logged."""
    with caplog.at_level(logging.ERROR, logger="mcpfusion"):
        result = await FusionTester(_app(value)).call("t", "a")
    assert result.blocks == (
        '<tool_error code="INTERNAL_ERROR" severity="error">\n'
        "<message>Action 'a' of tool 't' returned data that does not match its output "
        f"schema.</message>\n{NO_RETRY}\n</tool_error>",
    )
    assert result.structured_content is None
    assert [r.levelno for r in caplog.records if r.name == "mcpfusion"] == [logging.ERROR]


def test_grouped_tool_advertises_only_when_every_action_declares() -> None:
    """SPEC §12: a grouped tool without an output schema on every action has no outputSchema."""
    app = Fusion("t", **PINNED)
    tool = app.tool("t")
    tool.action("a", output_schema=Total)(lambda: None)
    tool.action("b")(lambda: None)
    assert "outputSchema" not in app.list_tools()[0]


def test_grouped_tool_with_one_shared_schema() -> None:
    """SPEC §12: actions declaring the same schema advertise it as it is."""
    app = Fusion("t", **PINNED)
    tool = app.tool("t")
    tool.action("a", output_schema=Total)(lambda: None)
    tool.action("b", output_schema=Total)(lambda: None)
    assert app.list_tools()[0]["outputSchema"]["title"] == "Total"


def test_select_relaxes_top_level_required() -> None:
    """SPEC §11/§12: with `_select` the advertised top-level keys are no longer promised."""
    app = Fusion("t", **PINNED)
    app.tool("t").enable_select().action("a", output_schema=Total)(lambda: None)
    assert "required" not in app.list_tools()[0]["outputSchema"]


@pytest.mark.parametrize("how", ["raised", "returned"])
async def test_a_warning_on_a_structured_action_is_sent_as_an_error(how: str) -> None:
    """SPEC §12: a warning carries no structured content, so it goes out with isError."""
    app = Fusion("srv", **PINNED)

    @app.tool("t").action("a", output_schema=Total)
    def warn() -> Any:
        if how == "raised":
            raise ToolError("STALE", "Totals are an hour old.", severity="warning")
        return tool_error("STALE", "Totals are an hour old.", severity="warning")

    result = await FusionTester(app).call("t", "a")
    assert result.is_error
    assert result.structured_content is None
    assert result.error is not None
    assert (result.error.code, result.error.severity) == ("STALE", "warning")


async def test_a_warning_elsewhere_is_not_an_error() -> None:
    """SPEC §9: without an output schema a warning keeps isError false."""
    app = Fusion("srv", **PINNED)

    @app.tool("t").action("a")
    def warn() -> None:
        raise ToolError("STALE", "Totals are an hour old.", severity="warning")

    result = await FusionTester(app).call("t", "a")
    assert not result.is_error
    assert result.error_code == "STALE"


def test_an_output_schema_that_allows_extra_fields_is_refused() -> None:
    """SPEC §12: an output schema is a whitelist; extra='allow' would send undeclared fields."""

    class Open(BaseModel):
        model_config = ConfigDict(extra="allow")
        cents: int

    tool = Fusion("srv", **PINNED).tool("t")
    with pytest.raises(DefinitionError, match=r"sets extra='allow'"):
        tool.action("a", output_schema=Open)(lambda: {"cents": 1})
    with pytest.raises(DefinitionError, match=r"sets extra='allow'"):
        tool.action("b", output_schema=list[Open])(lambda: [])
