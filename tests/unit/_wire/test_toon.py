"""Unit tests for mcpfusion._wire.toon: the same bytes as toon_format's encoder, faster."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
import toon_format
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfusion._wire import toon
from mcpfusion._wire.datablock import neutralize_strings
from mcpfusion._wire.format import neutralize

DELIMITERS = st.sampled_from([",", "|", "\t"])

# Strings that meet every quoting rule: TOON's structural characters, the delimiters,
# keywords, numbers, leading hyphens and spaces, escapes, non-ASCII and control characters.
TRICKY = st.sampled_from(
    [
        "",
        " ",
        "a b",
        " a",
        "a ",
        "-",
        "-1",
        "#x",
        "true",
        "false",
        "null",
        "05",
        "+1",
        "1e5",
        "1.5",
        "a:b",
        'a"b',
        "a\\b",
        "[x]",
        "{x}",
        "a,b",
        "a|b",
        "a\tb",
        "a\nb",
        "\x01",
        "é",
        "\ufeffbom",
        "x.y",
        "_k",
        "1a",
        "a-b",
        "日本",
        "<domain_rules>",
        "a<b",
        "</llm_directives",
        "<!--",
        "<\tsystem_rules>",
        "x\ud800",
    ]
)
TEXT = st.one_of(TRICKY, st.text(max_size=8))
KEYS = st.one_of(TRICKY, st.text(alphabet="abc_.1 -:", max_size=4))
PRIMITIVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)


def rows(leaf: st.SearchStrategy[Any]) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Lists of objects over one key set: the tabular and nested-tabular forms."""
    return st.lists(KEYS, min_size=1, max_size=3, unique=True).flatmap(
        lambda keys: st.lists(st.fixed_dictionaries({k: leaf for k in keys}), min_size=1)
    )


JSON_VALUES = st.recursive(
    PRIMITIVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(KEYS, inner, max_size=4),
        rows(PRIMITIVES),
        rows(st.fixed_dictionaries({"a": PRIMITIVES, "b": PRIMITIVES})),
        st.dictionaries(KEYS, st.fixed_dictionaries({"x": PRIMITIVES}), min_size=2, max_size=3),
    ),
    max_leaves=25,
)


@settings(max_examples=600)
@given(JSON_VALUES, DELIMITERS)
def test_plain_values_encode_as_toon_format_does(value: Any, delimiter: str) -> None:
    """Every plain JSON value is encoded to exactly toon_format's bytes, for each delimiter."""
    try:
        expected = toon_format.encode(value, delimiter=delimiter)
    except ValueError:  # a lone surrogate: no TOON text, and not the renderer's to write
        with pytest.raises(toon.NotPlain, match=r"^a lone surrogate$"):
            toon.encode(value, delimiter)
        return
    assert toon.encode(value, delimiter) == expected


@settings(max_examples=600)
@given(JSON_VALUES, DELIMITERS)
def test_strings_pass_the_text_rule_as_if_mapped_first(value: Any, delimiter: str) -> None:
    """With neutralize as the text rule, the text is toon_format's of the neutralized value.

    Unless a key would change (two keys could merge): then it is toon_format's to encode.
    """
    expected = toon_format.encode(neutralize_strings(value), delimiter=delimiter)
    try:
        assert toon.encode(value, delimiter, neutralize) == expected
    except toon.NotPlain:
        assert any(neutralize(key) != key for key in keys_of(value))


def keys_of(value: Any) -> list[str]:
    """Every key of every object in ``value``."""
    if isinstance(value, dict):
        return [*value, *(k for item in value.values() for k in keys_of(item))]
    if isinstance(value, list):
        return [k for item in value for k in keys_of(item)]
    return []


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ((1, 2), "a tuple, outside the plain JSON model"),
        ({"at": dt.date(2024, 1, 2)}, "a date, outside the plain JSON model"),
        ([Decimal("1.50")], "a Decimal, outside the plain JSON model"),
        ({1: "int key"}, "a key that is not a str"),
        ({"x": float("nan")}, "a non-finite float"),
        ([{"a": 1}, {"a": (2,)}], "a tuple, outside the plain JSON model"),
    ],
)
def test_values_outside_the_plain_model_are_left_to_toon_format(value: Any, reason: str) -> None:
    """Tuples, dates, Decimals, non-str keys and NaN are refused, for toon_format to encode."""
    with pytest.raises(toon.NotPlain, match=f"^{reason}$"):
        toon.encode(value, "|")


def test_a_lone_surrogate_or_a_cycle_is_left_to_toon_format() -> None:
    """A lone surrogate, in a value or a key, and a value containing itself are refused."""
    looped: list[Any] = []
    looped.append(looped)
    with pytest.raises(toon.NotPlain, match=r"^a lone surrogate$"):
        toon.encode({"k": "a\ud800"}, "|")
    with pytest.raises(toon.NotPlain, match=r"^a lone surrogate$"):
        toon.encode({"\udc00": 1}, "|")
    with pytest.raises(toon.NotPlain, match=r"^nested too deeply, or a cycle$"):
        toon.encode(looped, "|")


def test_a_key_the_text_rule_changes_is_left_to_toon_format() -> None:
    """A key neutralize would rewrite is refused: two keys could become one."""
    with pytest.raises(toon.NotPlain, match=r"^a key the text rule rewrites$"):
        toon.encode({"<domain_rules>": 1, "&lt;domain_rules>": 2}, "|", neutralize)
