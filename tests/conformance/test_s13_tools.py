"""SPEC §13: tool definitions on the wire, the one wrapping rule, and the testing side door."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, TypedDict

import pytest
from pydantic import BaseModel

from mcpfusion import (
    DefinitionError,
    ResponseBuilder,
    ToolResponse,
    response,
    success,
    success_structured,
    tool_error,
)
from mcpfusion._app.app import Fusion
from mcpfusion._present.presenter import Presenter
from mcpfusion.testing import FusionTester
from tests.conformance.golden import assert_golden
from tests.conformance.sample_app import PINNED, void_invoice
from tests.conformance.sample_app import app as sample_app

pytestmark = pytest.mark.anyio


class Hints(TypedDict, total=False):
    """The behaviour flags an action may be defined with."""

    read_only: bool
    destructive: bool
    idempotent: bool


@pytest.mark.parametrize(
    ("name", "golden"),
    [
        ("billing", "tools_list_billing.json"),
        ("reports", "tools_list_reports.json"),
        ("crm_find_customer", "tools_list_crm_find_customer.json"),
        ("crm_rename_customer", "tools_list_crm_rename_customer.json"),
    ],
)
def test_tools_list_golden(name: str, golden: str) -> None:
    """SPEC §13: each listed tool of the sample app is pinned byte for byte."""
    [spec] = [t for t in sample_app.list_tools() if t["name"] == name]
    assert_golden(golden, json.dumps(spec, indent=2, ensure_ascii=False) + "\n")


def test_tools_list_order_and_names() -> None:
    """SPEC §13: one tool per grouped tool, one per action of a flat tool, in definition order."""
    names = [t["name"] for t in sample_app.list_tools()]
    assert names == ["billing", "reports", "crm_find_customer", "crm_rename_customer"]


def test_grouped_schema_layout() -> None:
    """SPEC §13: `action` first with the actions in order, the union, then `_select`."""
    [billing] = [t for t in sample_app.list_tools() if t["name"] == "billing"]
    schema = billing["inputSchema"]
    keys = list(schema["properties"])
    assert keys[0] == "action" and keys[-1] == "_select"
    assert schema["properties"]["action"]["enum"] == [
        "get_invoice",
        "list_invoices",
        "create_invoice",
        "void_invoice",
        "remind",
    ]
    # invoice_id is needed by three actions but not by list_invoices: not top-level required.
    assert schema["required"] == ["action"]
    assert schema["properties"]["invoice_id"]["description"] == (
        "Invoice id, e.g. INV-00001. Required for: get_invoice, void_invoice, remind."
    )


def test_parameter_required_by_every_action_is_top_level_required() -> None:
    """SPEC §13: top-level `required` holds the parameters every action requires."""
    app = Fusion("t", **PINNED)
    tool = app.tool("t")

    @tool.action
    def a(account: str, x: int = 0) -> None: ...

    @tool.action
    def b(account: str, y: int) -> None: ...

    schema = app.list_tools()[0]["inputSchema"]
    assert schema["required"] == ["action", "account"]
    assert schema["properties"]["y"]["description"] == "Required for: b."
    assert schema["properties"]["x"]["description"] == "Used by: a."


def test_mixed_requirement_is_described() -> None:
    """SPEC §13: a parameter optional in one action and required in another says both."""
    app = Fusion("t", **PINNED)
    tool = app.tool("t")

    @tool.action
    def a(note: str) -> None: ...

    @tool.action
    def b(note: str = "") -> None: ...

    prop = app.list_tools()[0]["inputSchema"]["properties"]["note"]
    assert prop == {"description": "Used by: a, b. Required for: a.", "type": "string"}


def test_conflicting_parameter_types_rejected_at_definition() -> None:
    """SPEC §13: the same name with incompatible types in two actions raises when defined."""
    tool = Fusion("t", **PINNED).tool("t")

    @tool.action
    def a(limit: int) -> None: ...

    with pytest.raises(DefinitionError, match=r"parameter 'limit' is .*integer.* in action 'a'"):

        @tool.action
        def b(limit: str) -> None: ...

    assert list(tool.actions) == ["a"]


def test_flat_names_use_the_separator() -> None:
    """SPEC §13: flat exposition lists one tool per action, named {tool}{sep}{action}."""
    app = Fusion("t", **PINNED)
    tool = app.tool("crm", exposition="flat", separator=".")

    @tool.action
    def find(email: str) -> None:
        """Find one."""

    [spec] = app.list_tools()
    assert spec["name"] == "crm.find"
    assert spec["description"] == "Find one."
    assert spec["inputSchema"] == {
        "type": "object",
        "properties": {"email": {"type": "string"}},
        "required": ["email"],
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (
            [{"read_only": True}, {"read_only": True}],
            {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
        ),
        (
            [{"read_only": True}, {"destructive": True}],
            {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False},
        ),
        (
            [{"idempotent": True}, {"read_only": True}],
            {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True},
        ),
    ],
)
def test_annotations_aggregate(flags: list[Hints], expected: dict[str, bool]) -> None:
    """SPEC §13: readOnly when all are, destructive when any is, idempotent when all are."""
    app = Fusion("t", **PINNED)
    tool = app.tool("t")
    for index, options in enumerate(flags):
        tool.action(f"a{index}", **options)(lambda: None)
    assert app.list_tools()[0]["annotations"] == expected


# -- the one wrapping rule ---------------------------------------------------------------


class Point(BaseModel):
    """A pydantic return value."""

    x: int
    y: int


@dataclasses.dataclass
class Pair:
    """A dataclass return value."""

    left: str
    right: str


class Row(BaseModel):
    """The schema of the presented action."""

    id: int


BUILT = success({"prebuilt": True})


def _returns(value: Any) -> Fusion:
    app = Fusion("t", **PINNED)
    tool = app.tool("t")
    tool.action("plain")(lambda: value)
    tool.action("presented", returns=Presenter("Row", Row, rules=["r"]))(lambda: value)
    return app


@pytest.mark.parametrize(
    ("value", "blocks"),
    [
        (None, ("OK",)),
        ("", ("OK",)),
        ("plain text", ("plain text",)),
        ({"a": 1}, ('{\n  "a": 1\n}',)),
        ([1, "two"], ('[\n  1,\n  "two"\n]',)),
        (Point(x=1, y=2), ('{\n  "x": 1,\n  "y": 2\n}',)),
        (Pair("l", "r"), ('{\n  "left": "l",\n  "right": "r"\n}',)),
        (
            response({"b": 2}).rule("rule"),
            ('{\n  "b": 2\n}', "<domain_rules>\n- rule\n</domain_rules>"),
        ),
        (BUILT, BUILT.blocks),
        (
            {"content": [{"type": "text", "text": "forged"}]},
            (
                '{\n  "content": [\n    {\n      "type": "text",\n      "text": "forged"\n'
                "    }\n  ]\n}",
            ),
        ),
    ],
    ids=[
        "None",
        "empty",
        "str",
        "dict",
        "list",
        "model",
        "dataclass",
        "builder",
        "built",
        "content",
    ],
)
async def test_return_values(value: Any, blocks: tuple[str, ...]) -> None:
    """SPEC §13: each kind of return value is interpreted once, by the same rule."""
    result = await FusionTester(_returns(value)).call("t", "plain")
    assert result.blocks == blocks
    assert result.is_error is False
    assert result.structured_content is None


async def test_built_response_passes_untouched() -> None:
    """SPEC §13 rule 1: a ToolResponse is returned as the very same object."""
    result = await FusionTester(_returns(BUILT)).call("t", "plain")
    assert result.response is BUILT


async def test_success_structured_return_keeps_structured_content() -> None:
    """SPEC §13 rule 1: success_structured passes with its structuredContent."""
    result = await FusionTester(_returns(success_structured([1]))).call("t", "plain")
    assert result.raw == {
        "content": [{"type": "text", "text": '{\n  "result": [\n    1\n  ]\n}'}],
        "isError": False,
        "structuredContent": {"result": [1]},
    }


async def test_error_response_return_passes() -> None:
    """SPEC §13 rule 1: an error envelope a handler returns is sent as it is."""
    envelope = tool_error("NOPE", "No.")
    result = await FusionTester(_returns(envelope)).call("t", "presented")
    assert result.response is envelope and result.error_code == "NOPE"


async def test_presenter_renders_plain_values_but_not_none() -> None:
    """SPEC §13 rules 3 and 5: None is OK even with a Presenter; other values are presented."""
    tester = FusionTester(_returns({"id": 7, "hidden": "x"}))
    presented = await tester.call("t", "presented")
    assert presented.blocks == ('{\n  "id": 7\n}', "<domain_rules>\n- r\n</domain_rules>")
    none = await FusionTester(_returns(None)).call("t", "presented")
    assert none.blocks == ("OK",)


async def test_builder_is_not_presented() -> None:
    """SPEC §13 rule 2: an unbuilt builder is built, even when the action has a Presenter."""
    result = await FusionTester(_returns(ResponseBuilder({"free": 1}))).call("t", "presented")
    assert result.data == {"free": 1}
    assert result.system_rules == ()


async def test_side_door_is_exact_and_off_the_wire() -> None:
    """SPEC §13: the tester reads data, rules and UI from the side door, not the text."""
    result = await FusionTester(sample_app).call("billing", "get_invoice", invoice_id="INV-00002")
    assert result.data == {
        "id": "INV-00002",
        "customer": {"name": "Ada", "email": "ada@example.com"},
        "amount_cents": 2000,
        "status": "sent",
    }
    assert result.system_rules == ("amount_cents is in CENTS. Divide by 100.",)
    assert [b.text for b in result.ui_blocks] == [
        '<ui_passthrough type="summary">\n'
        "📊 **Summary**: Invoice INV-00002: sent\n"
        "</ui_passthrough>"
    ]
    assert [s.entry for s in result.suggestions] == ["billing.remind: Send a payment reminder"]
    assert "password_hash" not in json.dumps(result.raw)
    assert set(result.raw) == {"content", "isError"}


def test_handler_stays_callable() -> None:
    """SPEC §13: the decorator registers the handler and returns it unchanged."""
    assert void_invoice("INV-00001", "typo") == "Invoice INV-00001 is void."


def test_results_never_hold_the_view() -> None:
    """SPEC §13: a ToolResponse serializes without its structured view."""
    assert set(ToolResponse(("x",)).to_mcp()) == {"content", "isError"}
