"""Unit tests of _present.redaction: paths, censoring in place, traces and their search."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from mcpfusion import DefinitionError, Presenter, require_view, ui
from mcpfusion._present import data_search
from mcpfusion._present.redaction import (
    Redaction,
    Traces,
    _rebuilt,
    parse_path,
)


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


def test_scrubbed_copies_only_what_changes() -> None:
    """A container holding no trace is the same object; the caller's data is never written."""
    kept = {"k": "nothing here"}
    data: dict[str, Any] = {"note": "phone 5551234", "kept": kept, "list": ["5551234", 7]}
    scrubbed = data_search.scrubbed(data, lambda text: text.replace("5551234", "[R]"))
    assert scrubbed == {"note": "phone [R]", "kept": kept, "list": ["[R]", 7]}
    assert scrubbed["kept"] is kept
    assert data["note"] == "phone 5551234" and data["list"][0] == "5551234"
    assert data_search.scrubbed(kept, str.upper) is not kept


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
