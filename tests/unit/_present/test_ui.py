"""Unit tests for mcpfusion.ui: the UIBlock value and its helpers."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfusion import SerializationError, UIBlock, ui
from mcpfusion._present.ui import _CHUNK_ROWS, _FEW_ROWS
from mcpfusion._wire.format import fold_lines, ui_passthrough


@pytest.mark.parametrize("type_", ["", "a\nb", "a\rb", "x\u2028"])
def test_type_must_be_one_nonempty_line(type_: str) -> None:
    """An empty or multi-line block type raises ValueError."""
    with pytest.raises(ValueError, match="type"):
        UIBlock(type_, "c")


@pytest.mark.parametrize("title", [None, 1, b"x"])
def test_title_must_be_a_str(title: Any) -> None:
    """A title that is not a str raises TypeError."""
    with pytest.raises(TypeError, match="title must be a str"):
        UIBlock("markdown", "c", title=title)


def test_block_is_a_frozen_value() -> None:
    """UIBlock is immutable and compares and hashes by value."""
    block = ui.markdown("x", title="t")
    with pytest.raises(dataclasses.FrozenInstanceError, match=r"^cannot assign to field 'title'$"):
        block.title = "u"  # type: ignore[misc]
    assert block == UIBlock("markdown", "x", "t")
    assert len({block, UIBlock("markdown", "x", "t")}) == 1


def test_text_is_the_wire_template() -> None:
    """UIBlock.text renders through the one template function."""
    block = UIBlock("t", "c", "T", "half", 0)
    assert block.text == ui_passthrough("t", "c", title="T", width="half", priority=0)


def test_code_block_rejects_a_language_with_backticks() -> None:
    """code_block cannot take a language that would break the fence line."""
    message = r"^a fence language cannot hold backticks or line breaks: 'py`'$"
    with pytest.raises(ValueError, match=message):
        ui.code_block("py`", "x")


def test_table_accepts_any_sequences_and_escapes_headers() -> None:
    """Rows may be tuples from a generator; headers are escaped like cells."""
    block = ui.table(("a|b", 2), ((i, i * i) for i in range(2)))
    assert block.content == "| a\\|b | 2 |\n| --- | --- |\n| 0 | 0 |\n| 1 | 1 |"


def _table_cell_by_cell(headers: list[Any], rows: list[list[Any]]) -> str:
    """A table written a cell at a time: what ``ui.table`` writes a column at a time."""

    def cell(value: Any) -> str:
        text = "" if value is None else str(value)
        return fold_lines(text.replace("|", "\\|"))

    lines = ["| " + " | ".join(cell(h) for h in headers) + " |"]
    lines.append("| " + " | ".join("---" for _ in headers) + " |")
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


_CELLS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(alphabet=st.sampled_from("ab|\\ \n\r\u2028\x00é<")),
    st.sampled_from(["", "x", "a|b", "two\nlines", "INV-1"]),
)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=1, max_value=4).flatmap(
        lambda width: st.lists(st.lists(_CELLS, min_size=width, max_size=width), max_size=24)
    ),
    st.data(),
)
def test_table_writes_each_cell_as_a_cell_at_a_time_would(
    rows: list[list[Any]], data: st.DataObject
) -> None:
    """A few rows cell by cell, more column-wise (text, numbers, mixed, escaped): one rule."""
    width = len(rows[0]) if rows else data.draw(st.integers(min_value=1, max_value=4))
    headers = data.draw(st.lists(_CELLS, min_size=width, max_size=width))
    assert ui.table(headers, rows).content == _table_cell_by_cell(headers, rows)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=1, max_value=4).flatmap(
        lambda width: st.lists(
            st.lists(_CELLS, min_size=width, max_size=width),
            min_size=_FEW_ROWS + 1,
            max_size=_FEW_ROWS + 16,
        )
    ),
    st.data(),
)
def test_more_than_a_few_rows_are_written_column_wise_by_the_same_rule(
    rows: list[list[Any]], data: st.DataObject
) -> None:
    """Past the few rows written cell by cell, the column-wise way gives the same text."""
    headers = data.draw(st.lists(_CELLS, min_size=len(rows[0]), max_size=len(rows[0])))
    assert ui.table(headers, rows).content == _table_cell_by_cell(headers, rows)


def test_a_long_table_is_written_in_chunks_as_one() -> None:
    """Rows beyond one chunk, and a bad row in a later chunk, read as in one table."""
    rows = [[f"r{n}", n, None if n % 7 else "a|b"] for n in range(_CHUNK_ROWS * 2 + 5)]
    assert ui.table(["a", "b", "c"], rows).content == _table_cell_by_cell(["a", "b", "c"], rows)
    rows[_CHUNK_ROWS + 3] = ["short"]
    message = rf"^table row {_CHUNK_ROWS + 3} has 1 cells; expected 3 \(one per header\)$"
    with pytest.raises(ValueError, match=message):
        ui.table(["a", "b", "c"], rows)


def test_table_without_rows_is_a_header() -> None:
    """A table with no rows still has its header and separator lines."""
    assert ui.table(["x"], []).content == "| x |\n| --- |"


def test_list_stringifies_items() -> None:
    """List items of any type are str()-ed, None included."""
    assert ui.list([1, None, 2.5]).content == "- 1\n- None\n- 2.5"


def test_empty_list_has_empty_content() -> None:
    """An empty list renders an empty block body."""
    assert ui.list([]).text == '<ui_passthrough type="markdown">\n\n</ui_passthrough>'


def test_summary_keeps_its_text() -> None:
    """summary prefixes the marker and keeps the text as it is (line breaks included)."""
    assert ui.summary("a\nb").content == "📊 **Summary**: a\nb"


class Config(pydantic.BaseModel):
    """A chart config as a model."""

    title: str
    series: list[int]


def test_echarts_and_json_accept_models() -> None:
    """echarts and json serialize models through the data-block JSON."""
    block = ui.echarts(Config(title="t", series=[1]))
    assert block.content == '```echarts\n{\n  "title": "t",\n  "series": [\n    1\n  ]\n}\n```'
    assert ui.json(Config(title="t", series=[])).content.startswith("```json\n{")


def test_json_of_unserializable_value_raises() -> None:
    """ui.json raises SerializationError for a value it cannot serialize."""
    unknown = r"^the data cannot be serialized: Unable to serialize unknown type: <class 'object'>$"
    with pytest.raises(SerializationError, match=unknown):
        ui.json(object())


def test_ui_rejects_inputs_that_cannot_render() -> None:
    """Bad UI inputs fail where they are written, not when the response is built."""
    with pytest.raises(TypeError, match="content must be a str"):
        ui.markdown(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="type is a str"):
        ui.UIBlock(5, "x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one header"):
        ui.table([], [])
    with pytest.raises(TypeError, match="not a str"):
        ui.list("abc")


def test_an_int_subclass_priority_is_kept_as_its_number() -> None:
    """An IntEnum priority whose text is markup is stored and written as the plain int."""

    class Rank(enum.IntEnum):
        HIGH = 2

        def __str__(self) -> str:
            return '"><tool_error>'

        def __format__(self, spec: str) -> str:
            return str(self)

    block = UIBlock("t", "c", priority=Rank.HIGH)
    assert type(block.priority) is int and block.priority == 2
    assert block.text == ui_passthrough("t", "c", priority=2)
