"""Unit tests for mcpfusion._wire.datablock: JSON, compact JSON and TOON rendering of the data."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import pydantic_core
import pytest
import toon_format

from mcpfusion._errors import SerializationError
from mcpfusion._wire.datablock import (
    CHUNK_ROWS,
    DATA_FORMATS,
    EMPTY_TEXT,
    neutralize_strings,
    render_data,
    to_json,
    to_jsonable,
    to_toon,
)
from mcpfusion._wire.format import neutralize_json


def cannot_serialize(cause: str) -> str:
    """The ``match=`` pattern of a SerializationError whose pydantic-core message is ``cause``."""
    return "^" + re.escape(f"the data cannot be serialized: {cause}") + "$"


ROWS = [{"id": i, "name": f"n{i}", "tags": ["a", "b"], "at": dt.date(2024, 1, i)} for i in (1, 2)]


def test_to_json_matches_pydantic_core_when_nothing_to_neutralize() -> None:
    """Without a reserved tag, to_json is exactly pydantic-core's indented output."""
    assert to_json(ROWS) == pydantic_core.to_json(ROWS, indent=2).decode()


def test_to_json_compact() -> None:
    """indent=None writes compact JSON with no whitespace."""
    assert to_json({"a": [1, {"b": None}]}, indent=None) == '{"a":[1,{"b":null}]}'


def test_to_json_neutralizes_only_reserved_tags() -> None:
    """Only a '<' that starts a reserved tag is escaped; other '<' stay raw."""
    text = to_json(["<b>", "</llm_directives>", "a<tool_error"], indent=None)
    assert text == '["<b>","\\u003c/llm_directives>","a\\u003ctool_error"]'


def test_to_json_escaped_backslash_before_tag() -> None:
    """A backslash before a reserved tag stays a literal backslash after neutralization."""
    value = ["\\<domain_rules>"]
    text = to_json(value, indent=None)
    assert text == '["\\\\\\u003cdomain_rules>"]'
    assert json.loads(text) == value


@pytest.mark.parametrize(
    ("value", "kind"),
    [(object(), "object"), ({"k": {1, object()}}, "object"), ([lambda: 1], "function")],
)
def test_to_json_unserializable_raises_serialization_error(value: Any, kind: str) -> None:
    """An unserializable value raises SerializationError chained to the original error."""
    message = cannot_serialize(f"Unable to serialize unknown type: <class '{kind}'>")
    with pytest.raises(SerializationError, match=message) as caught:
        to_json(value)
    assert caught.value.code == "INTERNAL_ERROR"
    assert caught.value.__cause__ is not None


def test_to_json_circular_reference_raises_serialization_error() -> None:
    """A self-referencing value is a SerializationError, not a crash."""
    loop: list[Any] = []
    loop.append(loop)
    message = cannot_serialize(
        "Error serializing to JSON: ValueError: Circular reference detected (id repeated)"
    )
    with pytest.raises(SerializationError, match=message):
        to_json(loop)


def test_to_jsonable_uses_json_mode() -> None:
    """to_jsonable converts dates, sets, tuples and NaN the way pydantic's JSON mode does."""
    value = {"d": dt.date(2024, 1, 2), "s": {3}, "t": (1, 2), "n": float("nan")}
    assert to_jsonable(value) == {"d": "2024-01-02", "s": [3], "t": [1, 2], "n": None}
    unknown = cannot_serialize("Unable to serialize unknown type: <class 'object'>")
    with pytest.raises(SerializationError, match=unknown):
        to_jsonable(object())


def test_to_toon_uses_pipe_delimiter_and_round_trips() -> None:
    """to_toon writes a pipe-delimited table that decodes to the JSON form of the value."""
    flat = [{"id": 1, "at": dt.date(2024, 1, 1)}, {"id": 2, "at": dt.date(2024, 1, 2)}]
    assert to_toon(flat) == "[2|]{id|at}:\n  1|2024-01-01\n  2|2024-01-02"
    assert toon_format.decode(to_toon(ROWS)) == to_jsonable(ROWS)


def test_to_toon_unserializable_raises() -> None:
    """A value TOON cannot encode raises SerializationError."""
    unknown = cannot_serialize("Unable to serialize unknown type: <class 'object'>")
    with pytest.raises(SerializationError, match=unknown):
        to_toon({"k": object()})


@pytest.mark.parametrize("data_format", DATA_FORMATS)
def test_render_data_empty_values_are_ok(data_format: Any) -> None:
    """None and "" render as OK in every format."""
    assert render_data(None, data_format) == EMPTY_TEXT == "OK"
    assert render_data("", data_format) == "OK"


@pytest.mark.parametrize("data_format", DATA_FORMATS)
def test_render_data_str_is_verbatim_in_every_format(data_format: Any) -> None:
    """A str payload is never JSON-quoted or TOON-encoded, only neutralized."""
    assert render_data('a "b"\n<domain_rules>', data_format) == 'a "b"\n&lt;domain_rules>'


def test_render_data_formats() -> None:
    """json is indented, compact has no whitespace, toon is TOON."""
    value = {"a": [1, 2]}
    assert render_data(value) == '{\n  "a": [\n    1,\n    2\n  ]\n}'
    assert render_data(value, "compact") == '{"a":[1,2]}'
    assert render_data(value, "toon") == "a[2|]: 1|2"


def test_data_formats() -> None:
    """The three data formats, default first."""
    assert DATA_FORMATS == ("json", "compact", "toon")


def test_empty_toon_document_is_ok() -> None:
    """An empty object, which TOON writes as nothing, is sent as OK rather than a blank block."""
    assert render_data({}, "toon") == "OK"
    assert render_data({"a": {}}, "toon") != "OK"


def test_select_fields_keeps_schema_order_per_item() -> None:
    """SPEC §11: selected keys come out in the given order, per item; empty means all."""
    from mcpfusion._wire.datablock import select_fields

    row = {"b": 2, "a": 1, "c": 3}
    assert list(select_fields(row, ["a", "b", "c"], ["c", "a"])) == ["a", "c"]
    assert select_fields([row, {"a": 9}], ["a", "b"], ["a"]) == [{"a": 1}, {"a": 9}]
    assert select_fields(row, ["a"], []) is row
    with pytest.raises(TypeError, match=r"^select takes a list of keys, not a str$"):
        select_fields(row, ["a"], "a")


@pytest.mark.parametrize("indent", [2, None])
def test_long_lists_serialize_in_chunks_exactly_as_whole(indent: int | None) -> None:
    """A list past CHUNK_ROWS is written in chunks; the text is the whole list's, neutralized."""
    rows = [
        {"id": n, "note": "<domain_rules>" if n % 997 == 0 else f"row {n}", "tags": [n, None]}
        for n in range(2 * CHUNK_ROWS + 3)
    ]
    whole = pydantic_core.to_json(rows, indent=indent).decode()
    assert to_json(rows, indent=indent) == neutralize_json(whole)
    assert to_json(rows[:CHUNK_ROWS], indent=indent) == neutralize_json(
        pydantic_core.to_json(rows[:CHUNK_ROWS], indent=indent).decode()
    )


def test_to_json_writes_lone_surrogates_as_replacement_characters() -> None:
    """A lone surrogate, which UTF-8 cannot encode, is U+FFFD in JSON as in every text block."""
    value = {"k\udfff": ["a\ud800b", "<\ud800domain_rules>", 1]}
    assert to_json(value, indent=None) == '{"k\ufffd":["a\ufffdb","<\ufffddomain_rules>",1]}'
    assert render_data(value, "compact") == to_json(value, indent=None)


def test_to_json_unserializable_value_with_a_surrogate_still_raises() -> None:
    """Scrubbing surrogates does not hide another reason a value cannot be serialized."""
    with pytest.raises(SerializationError, match="cannot be serialized"):
        to_json({"a\ud800": object()})


def test_neutralize_strings_rewrites_every_string_and_key() -> None:
    """neutralize_strings neutralizes keys, values and list items and keeps other values."""
    value = {"<DOMAIN_RULES>": ["< /tool_error>", 1, None, True, {"k": "<b>"}], 2.5: "x\ud800"}
    assert neutralize_strings(value) == {
        "&lt;DOMAIN_RULES>": ["&lt; /tool_error>", 1, None, True, {"k": "<b>"}],
        2.5: "x\ufffd",
    }


def test_to_jsonable_and_toon_scrub_lone_surrogates() -> None:
    """Structured content and TOON start from to_jsonable: a lone surrogate is U+FFFD there too."""
    value = {"k\udfff": ("a\ud800b",)}
    assert to_jsonable(value) == {"k\ufffd": ["a\ufffdb"]}
    assert to_toon(value) == '"k\ufffd"[1|]: a\ufffdb'
    assert to_toon({"k": "<\ud800domain_rules>"}) == "k: <\ufffddomain_rules>"


def test_to_toon_neutralizes_escaped_and_adjacent_tags() -> None:
    """A tag TOON writes with escapes (a tab, a line break) or that spans two values is &lt;."""
    assert to_toon({"k": "<\t/\ntool_error>"}) == 'k: "&lt;\\t/\\ntool_error>"'
    assert to_toon({"a": "<", "domain_rules": 1}) == "a: &lt;\ndomain_rules: 1"
    assert toon_format.decode(to_toon({"k": "<\t/\ntool_error>"})) == {"k": "&lt;\t/\ntool_error>"}
