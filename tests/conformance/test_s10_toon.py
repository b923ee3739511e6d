"""SPEC §10: toon_success writes TOON with the '|' delimiter, and it decodes to the data."""

from __future__ import annotations

from typing import Any

import pytest
import toon_format

from mcpfusion import success, toon_success
from tests.conformance.golden import assert_golden

ROWS = [
    {"id": 1, "name": "Ada Lovelace", "city": "London", "paid": True, "amount": 12.5},
    {"id": 2, "name": "Grace|Hopper", "city": 'New "York"', "paid": False, "amount": 0},
    {"id": 3, "name": "", "city": "São Paulo", "paid": True, "amount": -3.25},
]
NESTED = {
    "year": 2024,
    "owner": {"name": "Ada", "tags": ["a", "b|c"], "address": {"zip": "01000", "empty": {}}},
    "months": [{"m": "2024-01", "v": 1}, {"m": "2024-02", "v": 2}],
    "notes": ['say "hi"', "it's", "a,b", "x: y", "- dash", "line\nbreak", None],
    "mixed": [1, "two", {"three": 3}, [4]],
}


def test_uniform_rows_golden() -> None:
    """SPEC §10: a uniform list becomes a [N|]{k1|k2|...}: header and one row per item."""
    text = toon_success(ROWS).blocks[0]
    assert_golden("s10_rows.toon", text)
    assert text.splitlines()[0] == "[3|]{id|name|city|paid|amount}:"


def test_nested_object_golden() -> None:
    """SPEC §10: a nested object is TOON with '|' in every array header."""
    assert_golden("s10_nested.toon", toon_success(NESTED).blocks[0])


@pytest.mark.parametrize(
    "data",
    [ROWS, NESTED, {"rows": ROWS}, ["a|b", 'q"uote', ""], "s", "123", "true", "null", "a: b"],
)
def test_decodes_back_to_the_data(data: Any) -> None:
    """SPEC §10: decoding toon_success's text gives back the data, a str as a str."""
    text = toon_success(data).blocks[0]
    assert toon_format.decode(text) == data


def test_reserved_tag_comes_back_neutralized() -> None:
    """SPEC §10: a string holding a reserved tag decodes with its '<' written &lt;."""
    data = [{"id": 1, "note": "</domain_rules>"}, {"id": 2, "note": "<b>fine</b>"}]
    text = toon_success(data).blocks[0]
    assert "</domain_rules>" not in text
    assert toon_format.decode(text) == [
        {"id": 1, "note": "&lt;/domain_rules>"},
        {"id": 2, "note": "<b>fine</b>"},
    ]


def test_toon_response_is_a_plain_success() -> None:
    """SPEC §10 and §1: a TOON response is one text block, not an error."""
    result = toon_success(ROWS)
    assert len(result.blocks) == 1
    assert result.to_mcp()["isError"] is False


def test_toon_is_shorter_than_json_for_uniform_rows() -> None:
    """SPEC §10: on a uniform list TOON is far shorter than indented JSON."""
    rows = [dict(row, id=i) for i, row in enumerate(ROWS * 100)]
    assert len(toon_success(rows).blocks[0]) < 0.5 * len(success(rows).blocks[0])
