"""Unit tests of _present.scrubber: traces of redacted values are replaced in every part."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from mcpfusion import Presenter, require_view
from mcpfusion._present.redaction import Traces
from mcpfusion._present.scrubber import Scrubber
from mcpfusion._present.text_fields import text_fields
from mcpfusion._wire.parts import ResponseView, Suggestion, UIBlock


def texts_view(text: str) -> ResponseView:
    """A view whose every non-data part holds ``text``."""
    block = UIBlock("markdown", text, title=text)
    return ResponseView(
        "data stays", (block,), (block,), (text,), (text,), (Suggestion("t.a", text),)
    )


@pytest.mark.parametrize("count", [1, 40, 5_000])
def test_scrubber_finds_traces_alike_for_few_and_many(count: int) -> None:
    """One value or thousands, the traces in every text part are found and replaced alike."""
    values = [f"user{n:05d}@example.com" for n in range(count)]
    traces = Traces()
    traces.add(values, "[R]")
    text = f"mail {values[-1]} and {values[0]}, not user@example.com"
    view = Scrubber(traces).view(texts_view(text))
    expected = "mail [R] and [R], not user@example.com"
    assert view.ui_blocks[0] == UIBlock("markdown", expected, title=expected)
    assert view.embeds == view.ui_blocks
    assert view.directives == view.system_rules == (expected,)
    assert view.suggestions == (Suggestion("t.a", expected),)
    assert view.data == "data stays"


def test_longest_trace_first_and_json_escaped_forms() -> None:
    """A value inside a longer one does not split it; JSON-escaped forms are found too."""
    traces = Traces()
    traces.add(['say "hi"', "hi there", "hi there, you"], "X")
    found = Scrubber(traces).found(['hi there, you; {"v": "say \\"hi\\""}'])
    assert [len(trace) for trace, _ in found] == sorted((len(t) for t, _ in found), reverse=True)
    assert {trace for trace, _ in found} == {"hi there, you", "hi there", 'say \\"hi\\"'}
    view = Scrubber(traces).view(texts_view('hi there, you; {"v": "say \\"hi\\""}'))
    assert view.system_rules == ('X; {"v": "X"}',)


def test_a_type_stays_one_line() -> None:
    """A UI block type holding a redacted value is replaced, folded to one line."""
    traces = Traces()
    traces.add(["python"], "multi\nline")
    block = Scrubber(traces).view(ResponseView(None, (UIBlock("python", "code"),))).ui_blocks[0]
    assert block.type == "multi line"


def test_data_rewrites_only_rows_holding_a_trace() -> None:
    """Only rows holding a trace are copied, along the way to it; the caller's rows stay."""
    rows: list[Any] = [
        {"note": "call 5551234 now", "who": {"tag": "x", "memo": "ring 5551234"}, "n": 1},
        {"note": "nothing to see", "who": {"tag": "y", "memo": "quiet here"}, "n": 2},
        {"note": None, "who": [{"memo": "list 5551234"}], "n": 3},
    ]
    traces = Traces()
    traces.add(["5551234"], "[R]")
    data = Scrubber(traces).view(ResponseView(rows)).data
    assert data == [
        {"note": "call [R] now", "who": {"tag": "x", "memo": "ring [R]"}, "n": 1},
        rows[1],
        {"note": None, "who": [{"memo": "list [R]"}], "n": 3},
    ]
    assert data[1] is rows[1] and data[0]["who"] is not rows[0]["who"]
    assert rows[0]["note"] == "call 5551234 now" and rows[2]["who"][0]["memo"] == "list 5551234"


class _Memo(BaseModel):
    memo: str


class _Noted(BaseModel):
    note: str
    owner: _Memo
    loose: Any


def test_owned_data_is_rewritten_in_place_along_the_schema_and_copied_below_any() -> None:
    """Masking's own rows take their new strings in place; an Any-typed dict is copied."""
    loose = {"memo": "x 5551234"}
    owner = {"memo": "ring 5551234"}
    rows: list[Any] = [
        {"note": "call 5551234", "owner": owner, "loose": loose},
        {"note": "quiet", "owner": {"memo": "5551234"}, "loose": {"memo": "q"}},
    ]
    second = rows[1]
    traces = Traces()
    traces.add(["5551234"], "[R]")
    data = Scrubber(traces, text_fields(_Noted), owned=rows).view(ResponseView(rows)).data
    assert data is rows
    assert rows == [
        {"note": "call [R]", "owner": {"memo": "ring [R]"}, "loose": {"memo": "x [R]"}},
        {"note": "quiet", "owner": {"memo": "[R]"}, "loose": {"memo": "q"}},
    ]
    assert rows[0]["owner"] is owner and rows[1] is second
    assert loose == {"memo": "x 5551234"}


def test_a_builder_s_data_is_never_written_by_its_build() -> None:
    """Rows a caller holds through ``builder()`` keep their strings; only the sent copy changes."""
    view = Presenter("Noted", _Noted, redact=["owner.memo"])
    built = view.builder([{"note": "mail bob@x.io", "owner": {"memo": "bob@x.io"}, "loose": 1}])
    response = built.build()
    assert require_view(response).data[0]["note"] == "mail [REDACTED]"
    assert built.data[0]["note"] == "mail bob@x.io"


@given(
    st.lists(st.text(alphabet='ab"\\', min_size=4, max_size=7), min_size=1, max_size=6),
    st.text(alphabet='ab"\\', max_size=40),
)
def test_replacing_from_hits_is_the_longest_first_alternation(values: list[str], text: str) -> None:
    """Hits are replaced as a regex of the traces longest first would: leftmost, longest."""
    traces = Traces()
    traces.add(values, "X")
    traces_found = Scrubber(traces).found([text])
    pattern = "|".join(re.escape(trace) for trace, _ in traces_found)
    expected = re.sub(pattern, "X", text) if traces_found else text
    assert Scrubber(traces).view(texts_view(text)).system_rules == (expected,)


def test_a_trace_never_spans_two_strings_of_the_data() -> None:
    """Strings are searched apart: a value split over two fields or rows stays as it is."""
    traces = Traces()
    traces.add(["5551234", "tail\0head"], "[R]")
    rows: list[Any] = [
        {"a": "the tail", "b": "call 555", "c": "1234 now"},  # "tail" ends column a's row 0
        {"a": "head on", "b": "x tail\0head y", "c": "ring 5551234"},
    ]
    data = Scrubber(traces).view(ResponseView(rows)).data
    assert data == [
        rows[0],
        {"a": "head on", "b": "x [R] y", "c": "ring [R]"},
    ]
    assert data[0] is rows[0]


def test_a_nul_inside_a_string_of_the_data_is_no_separator() -> None:
    """A string holding the separator itself is rewritten alone, rows never misaligned."""
    traces = Traces()
    traces.add(["5551234"], "[R]")
    rows: list[Any] = [{"b": "x\0y 5551234"}, {"b": "5551234"}, {"b": "quiet"}]
    data = Scrubber(traces).view(ResponseView(rows)).data
    assert data == [{"b": "x\0y [R]"}, {"b": "[R]"}, rows[2]]
    assert data[2] is rows[2]


class _Contact(BaseModel):
    text: str


class _Called(BaseModel):
    phone: str
    contact: _Contact


def test_what_a_censor_function_returns_is_never_written_into() -> None:
    """A censor's shared output (a constant dict) keeps its text; the sent copy is scrubbed."""
    placeholder = {"text": "withheld; ask about 555-0100"}

    def censor(value: Any) -> Any:
        return placeholder if isinstance(value, dict) else "***" + value[-4:]

    view = Presenter("Called", _Called, redact=["phone", "contact"], censor=censor)
    sent = require_view(view.present([{"phone": "555-0100", "contact": {"text": "a"}}])).data
    assert sent[0]["contact"] == {"text": "withheld; ask about ***0100"}
    assert placeholder == {"text": "withheld; ask about 555-0100"}


class _Filed(BaseModel):
    phone: str
    note: str
    extra: Any


def test_present_scrubs_its_own_rows_and_never_a_value_passed_through() -> None:
    """A trace in an Any-typed value is scrubbed in a copy: the caller's dict keeps its text."""
    shared = {"memo": "ring 555-0100"}
    rows = [{"phone": "555-0100", "note": "call 555-0100", "extra": shared}]
    view = Presenter("Filed", _Filed, redact=["phone"])
    sent = require_view(view.present(rows)).data
    assert sent == [
        {"phone": "[REDACTED]", "note": "call [REDACTED]", "extra": {"memo": "ring [REDACTED]"}}
    ]
    assert shared == {"memo": "ring 555-0100"} and rows[0]["note"] == "call 555-0100"
