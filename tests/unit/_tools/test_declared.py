"""Input schemas declared as JSON Schema: advertised as given, enforced as declared."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from mcpfusion import DefinitionError, Fusion
from mcpfusion.testing import FusionTester

SHIPPING: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "method": {"enum": ["post", "courier"]},
        "address": {"type": "string", "minLength": 3},
        "locker": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["method"],
    "anyOf": [{"required": ["address"]}, {"required": ["locker"]}],
    "if": {"properties": {"method": {"const": "courier"}}},
    "then": {"required": ["address"]},
    "additionalProperties": False,
}


class Shipment(BaseModel):
    """What an order returns."""

    method: str
    eta_days: int


def _app(exposition: str = "flat", **options: Any) -> Fusion:
    app = Fusion("shop")
    tool = app.tool("ship", exposition=exposition)  # type: ignore[arg-type]

    @tool.action("order", input_schema=SHIPPING, **options)
    def order(method: str, address: str = "-", locker: str = "-") -> str:
        return f"{method}:{address}:{locker}"

    return app


def test_the_declared_schema_is_advertised_as_given() -> None:
    """$schema, anyOf and if/then stay where they were, in the listed inputSchema."""
    [tool] = _app().list_tools()
    assert tool["inputSchema"] == SHIPPING
    assert tool["inputSchema"] is not SHIPPING


def test_select_is_added_to_a_declared_schema() -> None:
    """_select joins the declared properties, nothing else changes."""
    app = Fusion("shop")
    tool = app.tool("ship", exposition="flat").enable_select()

    @tool.action("order", input_schema=SHIPPING, output_schema=Shipment)
    def order(method: str) -> Shipment:
        return Shipment(method=method, eta_days=2)

    [listed] = app.list_tools()
    schema = listed["inputSchema"]
    assert "_select" in schema["properties"]
    assert {k: v for k, v in schema.items() if k != "properties"} == {
        k: v for k, v in SHIPPING.items() if k != "properties"
    }
    picked = FusionTester(app).call_sync(
        "ship_order", method="post", locker="L", _select=["eta_days"]
    )
    assert picked.raw["structuredContent"] == {"eta_days": 2}


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"method": "post", "locker": "L1"}, "post:-:L1"),
        ({"method": "courier", "address": "Main St 1"}, "courier:Main St 1:-"),
        ({"method": "post", "address": "Elm", "tags": [1, 2]}, "post:Elm:-"),
    ],
)
def test_valid_arguments_reach_the_handler_as_sent(
    arguments: dict[str, Any], expected: str
) -> None:
    """Arguments the schema accepts reach the parameters of their names; others default."""
    assert FusionTester(_app()).call_sync("ship_order", **arguments).text == expected


@pytest.mark.parametrize(
    ("arguments", "fields"),
    [
        ({"locker": "L1"}, {"method": "Field required."}),
        (
            {"method": "post"},
            {"arguments": "Fits none of the allowed forms: send 'address'; or send 'locker'."},
        ),
        ({"method": "courier", "locker": "L1"}, {"address": "Field required."}),
        (
            {"method": "van", "address": "Main", "extra": 1},
            {"extra": "Unknown field. Remove it;", "method": "The value is not one of"},
        ),
        ({"method": "post", "address": "x", "tags": [1, "2"]}, {"address": "The value is too"}),
        ({"method": "post", "locker": "L", "tags": [1, "2"]}, {"tags.1": "The value is not of"}),
    ],
)
def test_invalid_arguments_are_validation_errors_naming_each_field(
    arguments: dict[str, Any], fields: dict[str, str]
) -> None:
    """Each violation is a field of the validation envelope, its path dotted, never a call."""
    result = FusionTester(_app()).call_sync("ship_order", **arguments)
    assert result.error_code == "VALIDATION_ERROR"
    text = result.raw["content"][0]["text"]
    assert 'action="ship/order"' in text
    for path, start in fields.items():
        assert f'<field name="{path}">{start}' in text


def test_a_declared_schema_that_cannot_serve_is_a_definition_error() -> None:
    """Not an object, invalid, missing a parameter, leaving a parameter without a value, or
    on a grouped tool: each refused where the action is defined."""
    app = Fusion("bad")
    flat = app.tool("t", exposition="flat")
    cases: list[tuple[Any, Any, str]] = [
        ({"type": "array"}, lambda: "x", "must describe an object"),
        ({"type": "object", "minProperties": "one"}, lambda: "x", "not a valid JSON Schema at"),
        ({"type": "object", "x": float("nan")}, lambda: "x", "not JSON-compatible"),
        ({"type": "object"}, lambda n="": n, "parameter 'n' is not a top-level property"),
        (
            {"type": "object", "properties": {"n": {"type": "string"}}},
            lambda n: n,
            "parameter 'n' has no default but input_schema does not require it",
        ),
        ("{}", lambda: "x", "input_schema is a JSON Schema dict"),
    ]
    for index, (schema, handler, message) in enumerate(cases):
        with pytest.raises(DefinitionError, match=message):
            flat.action(f"a{index}", input_schema=schema)(handler)
    with pytest.raises(DefinitionError, match="only a flat tool advertises as given"):
        _app(exposition="grouped")
