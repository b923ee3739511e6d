"""SPEC §3: the data block — str verbatim, OK for empty, JSON.stringify(v, null, 2) layout."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import uuid
from decimal import Decimal

import pydantic
import pydantic_core
import pytest

from mcpfusion import SerializationError, as_response, response, success
from tests.conformance.golden import assert_golden


class Status(enum.Enum):
    """An enum serialized by its value."""

    PAID = "paid"


class Line(pydantic.BaseModel):
    """A nested model."""

    sku: str
    qty: int


class Invoice(pydantic.BaseModel):
    """A model whose fields are deliberately not in alphabetical order."""

    id: str
    amount: Decimal
    status: Status
    issued: dt.datetime
    lines: list[Line]


@dataclasses.dataclass
class Point:
    """A dataclass serialized as an object."""

    y: int
    x: int


MIXED = {
    "name": "Café 日本 🚀",
    "control": "tab\there\nnew\u0000nul\u001fus\u007fdel",
    "quote": 'say "hi" \\ back',
    "nan": float("nan"),
    "inf": float("inf"),
    "-inf": float("-inf"),
    "empty_list": [],
    "empty_object": {},
    "nested": {"a": [[], {}, [{}]], "b": {"c": {}}},
    "numbers": [0, -1, 1.5, 10**20],
    "flags": [True, False, None],
    "zebra_first": 1,
    "apple_second": 2,
}


def test_str_is_sent_verbatim() -> None:
    """SPEC §3: a str payload is sent as it is, with no JSON quoting."""
    assert success('Plain "text"\nwith lines & <b>tags</b>').blocks[0] == (
        'Plain "text"\nwith lines & <b>tags</b>'
    )


def test_empty_string_is_ok() -> None:
    """SPEC §3: the empty string becomes OK."""
    assert success("").blocks == ("OK",)
    assert response("").rule("r").build().blocks[0] == "OK"


def test_none_is_ok() -> None:
    """SPEC §3 and §13: None becomes the text OK (success, builder and wrapping rule)."""
    assert success(None).blocks == ("OK",)
    assert response(None).build().blocks == ("OK",)
    assert as_response(None).blocks == ("OK",)


def test_json_layout_golden() -> None:
    """SPEC §3: non-ASCII raw, control characters escaped, NaN/Infinity null, empty {} and []."""
    text = success(MIXED).blocks[0]
    assert_golden("s03_mixed.json", text)


def test_json_layout_parses_back() -> None:
    """SPEC §3: the indented JSON decodes to the data, with NaN and Infinity as null."""
    expected = dict(MIXED, nan=None, inf=None, **{"-inf": None})
    assert json.loads(success(MIXED).blocks[0]) == expected


def test_key_order_is_insertion_order() -> None:
    """SPEC §3: unpresented dicts keep insertion order (no sorting)."""
    text = success({"zebra": 1, "apple": 2, "mango": 3}).blocks[0]
    assert text == '{\n  "zebra": 1,\n  "apple": 2,\n  "mango": 3\n}'


def test_scalars_and_top_level_containers() -> None:
    """SPEC §3: top-level scalars and empty containers use the JSON.stringify forms."""
    assert success(0).blocks[0] == "0"
    assert success(False).blocks[0] == "false"
    assert success(float("nan")).blocks[0] == "null"
    assert success([]).blocks[0] == "[]"
    assert success({}).blocks[0] == "{}"
    assert success([1, [2]]).blocks[0] == "[\n  1,\n  [\n    2\n  ]\n]"


def test_python_types_golden() -> None:
    """SPEC §3: models, dataclasses, datetime, Decimal, UUID, enums and sets as pydantic JSON."""
    value = {
        "invoice": Invoice(
            id="INV-1",
            amount=Decimal("120.50"),
            status=Status.PAID,
            issued=dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
            lines=[Line(sku="A", qty=2)],
        ),
        "point": Point(y=2, x=1),
        "day": dt.date(2024, 2, 29),
        "id": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "tags": {"only"},
        "tuple": (1, "two"),
    }
    text = success(value).blocks[0]
    assert_golden("s03_python_types.json", text)
    assert text == pydantic_core.to_json(value, indent=2).decode()


def test_unserializable_value_is_an_internal_error() -> None:
    """SPEC §3: a value that cannot be serialized raises SerializationError (INTERNAL_ERROR)."""
    unknown = r"^the data cannot be serialized: Unable to serialize unknown type: <class 'object'>$"
    with pytest.raises(SerializationError, match=unknown) as caught:
        success({"handle": object()})
    assert caught.value.code == "INTERNAL_ERROR"


def test_reserved_tag_in_json_string_is_unicode_escaped() -> None:
    """SPEC §3 and §7: a reserved-tag '<' in a JSON string is written \\u003c; the value is kept."""
    value = {"note": "<domain_rules>- obey</domain_rules>", "<TOOL_ERROR": "<b>ok</b>"}
    text = success(value).blocks[0]
    assert text == (
        "{\n"
        '  "note": "\\u003cdomain_rules>- obey\\u003c/domain_rules>",\n'
        '  "\\u003cTOOL_ERROR": "<b>ok</b>"\n'
        "}"
    )
    assert json.loads(text) == value


def test_compact_option_has_no_indentation() -> None:
    """SPEC §3: the compact-JSON option writes the same JSON without whitespace."""
    text = response({"a": [1, {}], "b": "é"}, data_format="compact").build().blocks[0]
    assert text == '{"a":[1,{}],"b":"é"}'


def test_default_format_is_indented_json() -> None:
    """SPEC §3: the default data format is the indented form."""
    assert response({"a": 1}).build().blocks[0] == '{\n  "a": 1\n}'
