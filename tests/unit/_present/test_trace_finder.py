"""Unit tests of _present.trace_finder: the prefix prefilter finds what the automaton finds."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpfusion._present import trace_finder
from mcpfusion._present.data_search import rewrite
from mcpfusion._present.trace_finder import Hit, finder_of


def both(forms: dict[str, str], text: str) -> tuple[list[Hit], list[Hit]]:
    """The hits of ``forms`` in ``text`` by the finder's own way, and by the automaton."""
    finder = finder_of(dict(forms))
    assert finder is not None
    return sorted(finder.hits(text)), sorted(finder.automaton_hits(text))


def test_prefilter_is_used_for_a_few_prefixes() -> None:
    """Forms sharing a few prefixes and lengths are found without building the automaton."""
    forms = {f"2024-{n:06d}": "[N]" for n in range(500)} | {"billing7@example.com": "[E]"}
    finder = finder_of(forms)
    assert finder is not None
    text = "see 2024-000042, 2024-999999 and billing7@example.com, billing8@example.com"
    assert sorted(finder.hits(text)) == [
        (14, ("2024-000042", "[N]")),
        (52, ("billing7@example.com", "[E]")),
    ]
    assert finder._automaton is None


def test_overlapping_forms_and_a_form_that_prefixes_another() -> None:
    """Overlapping forms and a form that starts a longer one are all found, as by the automaton."""
    forms = {"abcd": "1", "abcdef": "2", "cdef": "3", "bcdefg": "4", "abcdabcd": "5"}
    text = "abcdefg abcdabcd abcdab abcd"
    mine, automaton = both(forms, text)
    assert mine == automaton
    assert rewrite(text, mine) == rewrite(text, automaton) == "2g 5 1ab 1"


def test_a_text_ending_inside_a_longer_form_finds_the_shorter() -> None:
    """At the text's end a longer form's slice is cut short and must not pass for a shorter one."""
    forms = {"wxyz": "S", "wxyz12": "L"}
    mine, automaton = both(forms, "..wxyz1")
    assert mine == automaton == [(5, ("wxyz", "S"))]


def test_escaped_forms_are_found_by_the_prefilter() -> None:
    """A form holding a quote, a backslash or a newline is found written escaped too."""
    forms = {'say "hi"': "Q", "C:\\dir": "B", "two\nlines": "N"}
    text = json.dumps(list(forms)) + ' say "hi"'
    mine, automaton = both(forms, text)
    assert mine == automaton
    assert {trace for _, (trace, _) in mine} == {
        'say \\"hi\\"',
        "C:\\\\dir",
        "two\\nlines",
        'say "hi"',
    }


def test_too_many_prefixes_fall_back_to_the_automaton() -> None:
    """Forms of more prefixes than MAX_PREFIXES are searched by the automaton: the same hits."""
    forms = {f"{n:04d}-form": "X" for n in range(trace_finder.MAX_PREFIXES + 1)}
    finder = finder_of(forms)
    assert finder is not None
    text = " ".join(forms) + " 0000-forms"
    assert sorted(finder.hits(text)) == sorted(finder.automaton_hits(text))
    assert len(finder.hits(text)) == len(forms) + 1
    assert finder._automaton is not None


def test_too_many_lengths_fall_back_to_the_automaton() -> None:
    """Forms of more lengths than MAX_LENGTHS are searched by the automaton, finding the same."""
    forms = {"abcd" + "e" * n: "X" for n in range(trace_finder.MAX_LENGTHS + 1)}
    finder = finder_of(forms)
    assert finder is not None
    text = "abcd" + "e" * 40
    assert sorted(finder.hits(text)) == sorted(finder.automaton_hits(text))
    assert finder._automaton is not None


def test_a_text_full_of_prefixes_goes_to_the_automaton() -> None:
    """A hostile text of prefixes past the lookup budget is searched by the automaton instead."""
    forms = {"billing1@example.com": "[E]", "billing22@example.com": "[E]"}
    text = "bill" * 5_000 + "billing22@example.com"
    finder = finder_of(forms)
    assert finder is not None
    budget = int(len(text) * trace_finder.CHECKS_PER_CHAR) + trace_finder.CHECKS_SLACK
    assert trace_finder.prefiltered(text, forms, ["bill"], [21, 20], budget) is None
    assert finder.hits(text) == [(len(text) - 1, ("billing22@example.com", "[E]"))]
    assert finder._automaton is not None


def test_a_table_of_hits_stays_on_the_prefilter() -> None:
    """A short text dense with real hits (a table of the values) spares the automaton's build."""
    forms = {f"2024-{n:06d}": "[N]" for n in range(1_000)}
    forms |= {f"billing{n}@example.com": "[E]" for n in range(1_000)}
    finder = finder_of(forms)
    assert finder is not None
    table = "".join(f"| 2024-{n:06d} | billing{n}@example.com |\n" for n in range(100))
    assert len(finder.hits(table)) == 200
    assert finder._automaton is None


def test_short_forms_are_not_searched() -> None:
    """Forms shorter than MIN_TRACE are dropped; none left makes no finder."""
    assert finder_of({"abc": "X"}) is None
    finder = finder_of({"abc": "X", "abcdef": "Y"})
    assert finder is not None
    assert finder.shortest == 6
    assert finder.hits("abc abcdef") == [(9, ("abcdef", "Y"))]


@pytest.mark.parametrize("text", ["", "ab", "abcdabcdabcd", "\0abcd\0"])
def test_texts_shorter_than_or_made_of_a_prefix(text: str) -> None:
    """Short texts, and texts holding only prefixes, give the automaton's hits."""
    mine, automaton = both({"abcdabcd": "X", "abcde": "Y"}, text)
    assert mine == automaton


_ALPHABET = 'ab"\\\n\0'


@given(
    st.lists(st.text(alphabet=_ALPHABET, min_size=4, max_size=9), min_size=1, max_size=8),
    st.text(alphabet=_ALPHABET, max_size=80),
)
def test_prefilter_and_automaton_find_the_same(forms: list[str], text: str) -> None:
    """On any forms and text (escapes, overlaps, shared prefixes) both ways find the same hits."""
    table = {form: str(n) for n, form in enumerate(forms)}
    finder = finder_of(dict(table))
    assert finder is not None
    automaton = sorted(finder.automaton_hits(text))
    if finder._prefixes:
        # Past the budget too: a text full of prefixes is still found right, only slower.
        unbudgeted = trace_finder.prefiltered(
            text, finder._texts, finder._prefixes, finder._lengths, len(text) * 16
        )
        assert unbudgeted is not None
        assert sorted(unbudgeted) == automaton
    assert sorted(finder.hits(text)) == automaton
    assert rewrite(text, finder.hits(text)) == rewrite(text, automaton)


@given(st.lists(st.text(alphabet="ab@é", min_size=4, max_size=7), min_size=1, max_size=40))
def test_prefixes_counted_in_the_joined_forms_are_the_sliced_ones(forms: list[str]) -> None:
    """The prefixes found by counting in the joined forms are each form's, up to MAX_PREFIXES."""
    table = dict.fromkeys(forms, "X")
    joined = "\0".join(table)
    assert trace_finder._prefixes(table, joined) == trace_finder._sliced(table)


def test_forms_holding_a_nul_or_escapes_take_their_prefixes_by_slicing() -> None:
    """A form holding a NUL or an escaped character still gives the prefilter every prefix."""
    finder = finder_of({"ab\0cd-1": "X", 'say "hi"': "Y", "plain-form": "Z"})
    assert finder is not None
    assert finder._prefixes == {"ab\0c", "ab\\u", "say ", "plai"}
    text = 'ab\0cd-1 and say \\"hi\\" and plain-form'
    assert sorted(finder.hits(text)) == sorted(finder.automaton_hits(text))
    assert len(finder.hits(text)) == 3
