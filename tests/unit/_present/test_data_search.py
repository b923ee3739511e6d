"""Unit tests of _present.data_search: the rows holding a trace are rewritten, nothing else."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mcpfusion._present import data_search
from mcpfusion._present.data_search import columns, scrubbed_data
from mcpfusion._present.trace_finder import Finder, finder_of


def finder(*forms: str) -> Finder:
    """The finder replacing each of ``forms`` by ``[R]``."""
    made = finder_of(dict.fromkeys(forms, "[R]"))
    assert made is not None
    return made


def scrub(data: Any, search: Finder) -> Any:
    """``data`` scrubbed by ``search``, read as ``columns`` reads it."""
    return scrubbed_data(data, search, columns(data, search.shortest))


def test_nested_paths_copy_each_container_once_and_leave_the_input() -> None:
    """Two strings under one nested dict are both rewritten in one copy of it; the input stays."""
    rows = [
        {"id": "r0", "who": {"a": "mail bob@x.io", "b": "bob@x.io twice"}, "n": "bob@x.io"},
        {"id": "r1", "who": {"a": "clean", "b": "clean"}, "n": "clean"},
    ]
    before = copy.deepcopy(rows)
    out = scrub(rows, finder("bob@x.io"))
    assert out == [
        {"id": "r0", "who": {"a": "mail [R]", "b": "[R] twice"}, "n": "[R]"},
        before[1],
    ]
    assert rows == before
    assert out[1] is rows[1]
    assert out[0]["who"] is not rows[0]["who"]


def test_a_list_of_strings_and_strings_below_lists_are_rewritten() -> None:
    """Rows that are strings, and strings in lists (no key path), are rewritten whole."""
    assert scrub(["call 5551234", "none here"], finder("5551234")) == ["call [R]", "none here"]
    rows = [{"notes": ["x 5551234", "y"], "tags": ("5551234",)}, {"notes": [], "tags": ()}]
    assert scrub(rows, finder("5551234")) == [
        {"notes": ["x [R]", "y"], "tags": ("[R]",)},
        rows[1],
    ]


def test_a_single_row_is_rewritten_as_a_dict() -> None:
    """Data that is one dict comes back as a rewritten copy of it."""
    row = {"note": "pay 2024-000001", "deep": {"n": "2024-000001!"}}
    assert scrub(row, finder("2024-000001")) == {"note": "pay [R]", "deep": {"n": "[R]!"}}
    assert row["note"] == "pay 2024-000001"


def test_untouched_data_is_returned_as_it_is() -> None:
    """Data holding no trace is the very same object."""
    rows = [{"note": "nothing to see"}]
    assert scrub(rows, finder("2024-000001")) is rows


def test_a_walked_row_gets_its_keyed_strings_too() -> None:
    """A row walked for a string below a list still has its keyed strings rewritten."""
    rows = [{"tags": ["x 5551234"], "note": "call 5551234"}, {"tags": [], "note": "5551234"}]
    assert scrub(rows, finder("5551234")) == [
        {"tags": ["x [R]"], "note": "call [R]"},
        {"tags": [], "note": "[R]"},
    ]


def test_a_container_shared_by_rows_is_never_written() -> None:
    """Rows sharing one nested dict each get their own rewritten copy; the shared one stays."""
    shared = {"mail": "bob@x.io", "name": "Bob"}
    rows = [{"who": shared, "n": 1}, {"who": shared, "n": 2}]
    out = scrub(rows, finder("bob@x.io"))
    assert out == [{"who": {"mail": "[R]", "name": "Bob"}, "n": n} for n in (1, 2)]
    assert shared == {"mail": "bob@x.io", "name": "Bob"}
    assert out[0]["who"] is not out[1]["who"]


@given(
    st.lists(st.text(alphabet="ab\0", min_size=4, max_size=6), min_size=1, max_size=4),
    st.lists(st.text(alphabet="ab", max_size=12), min_size=1, max_size=12),
)
def test_strings_found_by_counting_separators_are_the_ones_found_by_ends(
    forms: list[str], column: list[str]
) -> None:
    """Each changed string and its text, found by counting separators, is the general way's."""
    search = finder_of({form: f"<{n}>" for n, form in enumerate(forms)})
    assert search is not None
    joined = "\0".join(column)
    hits = search.hits(joined)
    assert sorted(data_search._changed(column, joined, hits)) == sorted(
        data_search._changed_by_ends(column, hits)
    )


def test_one_and_several_hits_in_a_string_are_rewritten_in_place() -> None:
    """A string holding one trace, one holding overlapping ones, and untouched strings around."""
    search = finder("abcd", "bcdefg", "zzzz")
    column = ["none", "x abcd y", "-", "abcdefg and zzzz!", "zzzz"]
    changed = scrub([{"s": s} for s in column], search)
    assert [row["s"] for row in changed] == ["none", "x [R] y", "-", "[R]efg and [R]!", "[R]"]
