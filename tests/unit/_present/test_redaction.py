"""Unit tests of _present.redaction: paths, censoring in place, traces and their search."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from mcpfusion import DefinitionError, Presenter, require_view, ui
from mcpfusion._present import data_search
from mcpfusion._present.redaction import (
    Redaction,
    Scrubber,
    Traces,
    _rebuilt,
    parse_path,
)
from mcpfusion._present.text_fields import text_fields
from mcpfusion._wire.parts import ResponseView, Suggestion, UIBlock


@pytest.mark.parametrize(
    ("path", "steps"),
    [
        ("ssn", ("ssn",)),
        ("*.email", ("*", "email")),
        ("lines[*].cost", ("lines", "[*]", "cost")),
        ("grid[*][*]", ("grid", "[*]", "[*]")),
        ("a-b.c_d", ("a-b", "c_d")),
    ],
)
def test_paths_parse_into_steps(path: str, steps: tuple[str, ...]) -> None:
    """Keys, '*' and '[*]' become one step each."""
    assert parse_path("P", path) == steps


def test_censor_reaches_every_shape_and_leaves_none() -> None:
    """Keys, any key, list items and nested lists are replaced in place; None stays."""
    rows: list[Any] = [
        {"a": "secret-a", "tags": ["t-one", None], "grid": [["cell"]], "m": {"x": 1234, "y": None}},
        {"a": None, "tags": None, "grid": [], "m": "not a dict"},
    ]
    traces = Traces()
    Redaction("P", ["a", "tags[*]", "grid[*][*]", "m.*"], "X").censor(rows, traces)
    assert rows == [
        {"a": "X", "tags": ["X", None], "grid": [["X"]], "m": {"x": "X", "y": None}},
        {"a": None, "tags": None, "grid": [], "m": "not a dict"},
    ]
    assert traces.forms() == {"secret-a": "X", "t-one": "X", "cell": "X", "1234": "X"}


def test_forms_of_numbers_subtrees_and_short_values() -> None:
    """Numbers need 4 digits, booleans never count, a subtree stands for its leaves."""
    traces = Traces()
    traces.add([12.5, 12.345, 123, 1234, True, {"k": ["deep-value", 98765]}, "abc"], "X")
    assert traces.forms() == {
        "12.345": "X",
        "1234": "X",
        "deep-value": "X",
        "98765": "X",
        "abc": "X",  # kept here; the search skips strings under 4 characters
    }


class _Owner(BaseModel):
    email: str | None = None


class _Row(BaseModel):
    ssn: str | None = None
    owner: _Owner | None = None


def test_censor_of_masked_rows_lacking_a_key_or_holding_none() -> None:
    """On rows masking built, a row lacking the key or holding None is left as it is."""
    rows: list[Any] = [
        {"ssn": "123-45-6789", "owner": {"email": "a@b.example"}},
        {"ssn": None, "owner": None},
        {"owner": {}},
    ]
    traces = Traces()
    Redaction("P", ["ssn", "owner.email"], "X", _Row).censor(rows, traces)
    assert rows == [
        {"ssn": "X", "owner": {"email": "X"}},
        {"ssn": None, "owner": None},
        {"owner": {}},
    ]
    assert traces.forms() == {"123-45-6789": "X", "a@b.example": "X"}


def test_forms_of_several_adds_keep_the_first_text_recorded() -> None:
    """Values added under one text are all forms; under two texts the first recorded wins."""
    one = Traces()
    one.add(["2024-000001", "bob@x.io"], "X")
    one.add(["bob@x.io", {"k": "deep-value"}], "X")
    assert one.forms() == {"2024-000001": "X", "bob@x.io": "X", "deep-value": "X"}
    two = Traces()
    two.add(["bob@x.io", "2024-000001"], "first")
    two.add(["bob@x.io", "joe@x.io"], "second")
    assert two.forms() == {"bob@x.io": "first", "2024-000001": "first", "joe@x.io": "second"}


def test_a_censor_function_and_its_text() -> None:
    """A function's output is the replacement; non-text outputs are written as JSON."""
    traces = Traces()
    Redaction("P", ["a"], lambda v: {"masked": len(v)}).censor([{"a": "abcdef"}], traces)
    assert traces.forms() == {"abcdef": '{"masked": 6}'}
    odd = Traces()
    Redaction("P", ["a"], lambda v: object()).censor([{"a": "abcdef"}], odd)
    assert odd.forms() == {"abcdef": "[REDACTED]"}


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


class Row(BaseModel):
    """A row with a secret."""

    id: int
    secret: str


def test_presenter_redaction_through_a_collection_with_a_limit() -> None:
    """Only rows in view are censored and searched; the truncation notice is untouched."""
    view = Presenter("Row", Row, limit=1, redact=["secret"])
    view.collection_ui(lambda rows: ui.markdown(rows[0]["secret"]))
    found = require_view(view.present([{"id": 1, "secret": "s3cr3t"}, {"id": 2, "secret": "zzzz"}]))
    assert found.data == [{"id": 1, "secret": "[REDACTED]"}]
    assert found.ui_blocks[1].content == "[REDACTED]"
    assert "1 shown, 1 hidden" in found.ui_blocks[0].content


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"redact": "ssn"}, "redact takes a list of paths, not a str"),
        ({"redact": ["id"], "censor": 3}, "censor is a str or a function"),
    ],
)
def test_bad_redaction_options(options: dict[str, Any], message: str) -> None:
    """A str of paths or a censor that is neither text nor function raises when defined."""
    with pytest.raises(DefinitionError, match=f"^Presenter 'Row': {message}"):
        Presenter("Row", Row, **options)


class Loose(BaseModel):
    """A row with a field masking passes through as it is."""

    id: int
    meta: Any
    tags: dict[str, Any]
    owner: Row


def test_data_masking_passes_through_is_never_changed() -> None:
    """A path through an Any-typed value copies before it writes; the caller's data stays."""
    shared = {"secret": "hush-hush", "inner": {"secret": "deeper-secret"}}
    row = {
        "id": 1,
        "meta": shared,
        "tags": {"inner": shared["inner"]},
        "owner": {"id": 2, "secret": "s3cr3t"},
    }
    view = Presenter(
        "Loose",
        Loose,
        redact=["meta.secret", "meta.inner.secret", "tags.inner.secret", "owner.secret"],
    )
    found = require_view(view.present(row)).data
    assert found["meta"] == {"secret": "[REDACTED]", "inner": {"secret": "[REDACTED]"}}
    assert found["tags"] == {"inner": {"secret": "[REDACTED]"}}
    assert found["owner"] == {"id": 2, "secret": "[REDACTED]"}
    assert shared == {"secret": "hush-hush", "inner": {"secret": "deeper-secret"}}
    assert row["owner"] == {"id": 2, "secret": "s3cr3t"}


def test_paths_through_built_containers_write_in_place() -> None:
    """Models, typed lists and dicts are masking's own: no copy is needed to write there."""

    class Deep(BaseModel):
        owner: Row | None
        rows: list[Row]
        by_id: dict[str, Row]
        loose: Any

    assert _rebuilt(Deep, parse_path("P", "owner.secret"))
    assert _rebuilt(Deep, parse_path("P", "rows[*].secret"))
    assert _rebuilt(Deep, parse_path("P", "by_id.*.secret"))
    assert not _rebuilt(Deep, parse_path("P", "loose.secret"))
    assert not _rebuilt(Deep, parse_path("P", "*.secret"))
    assert not _rebuilt(None, parse_path("P", "owner.secret"))


def test_columns_read_every_depth_with_rows_and_paths_and_skip_short_columns() -> None:
    """Strings of rows, nested dicts and lists come with their row and key path; short ones not."""
    data = [
        {"id": "a1", "note": "call 5551234", "who": {"mail": "x@y.example"}, "tags": ["long tag"]},
        {"id": "a2", "note": "call 5551234", "who": None, "tags": [], "n": 12345},
    ]
    columns = {
        (tuple(rows), tuple(column), path)
        for rows, column, path, joined in data_search.columns(data, 5)
        if joined == "\0".join(column)
    }
    assert columns == {
        ((0, 1), ("call 5551234", "call 5551234"), ("note",)),
        ((0,), ("x@y.example",), None),  # below a mixed column: the row is walked whole
        ((0,), ("long tag",), None),
    }
    assert {s for _, column, _, _ in data_search.columns(data, 2) for s in column} == {
        "a1",
        "a2",
        "call 5551234",
        "x@y.example",
        "long tag",
    }
    assert data_search.columns("a lone string", 4) == [
        (range(1), ["a lone string"], (), "a lone string")
    ]
    assert data_search.columns([1, None, 2.5], 4) == []


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


def test_scrubbed_copies_only_what_changes() -> None:
    """A container holding no trace is the same object; the caller's data is never written."""
    kept = {"k": "nothing here"}
    data: dict[str, Any] = {"note": "phone 5551234", "kept": kept, "list": ["5551234", 7]}
    scrubbed = data_search.scrubbed(data, lambda text: text.replace("5551234", "[R]"))
    assert scrubbed == {"note": "phone [R]", "kept": kept, "list": ["[R]", 7]}
    assert scrubbed["kept"] is kept
    assert data["note"] == "phone 5551234" and data["list"][0] == "5551234"
    assert data_search.scrubbed(kept, str.upper) is not kept


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


def test_joined_forms_hand_the_finder_their_join_when_all_are_strings() -> None:
    """Strings only: the forms come joined by NUL for the finder; with a number, no join."""
    strings = Traces()
    strings.add(["2024-000001", "bob@x.io"], "X")
    assert strings.joined_forms() == (
        {"2024-000001": "X", "bob@x.io": "X"},
        "2024-000001\0bob@x.io",
    )
    mixed = Traces()
    mixed.add(["2024-000001", 98765], "X")
    assert mixed.joined_forms() == ({"2024-000001": "X", "98765": "X"}, "")
