"""Markup left open: SPEC §7's clause for HTML-style readers (issue 10).

html.parser (Python 3.11) does not stop a tag at the end of the string the framework
placed: a tag left open there would run on into the framework's text and swallow the next
tag up to its ``>``:

- ``<b title="x`` (a quote opened after ``=`` and never closed), ``<b``, ``<b a=``,
  ``</b``: the next framework tag would become part of that tag;
- ``</``, ``</ x``, ``</1`` (``</`` not followed by a letter, no ``>``): a bogus comment
  up to the next ``>``;
- ``<script>``, ``<style>`` without their end tag: every later block raw text;
- a look-alike name (``<dоmain_rules``, Cyrillic o) left open: the same as ``<b``.

Every such ``<`` is neutralized, at every point a string lands (the data block in each
format, rules, suggestions, UI content, structured content); markup that ends inside its
string (the goldens' ``Keep <b>``) is kept.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mcpfusion import ToolResponse, response, success_structured, ui
from mcpfusion.wire import neutralize
from tests.attack.points import case_of
from tests.attack.readers import check

RULES = response("x").rule("r").build().blocks[1]

GAPS: dict[str, Callable[[str], ToolResponse]] = {
    "data block": lambda s: response(s).ui(ui.markdown("m")).build(),
    "rule": lambda s: response(1).rule(s).build(),
    "suggestion reason": lambda s: response(1).suggest("t.a", s).build(),
    "UI content": lambda s: response(1).ui(ui.markdown(s)).build(),
    "JSON value": lambda s: response({"a": s}).rule("r").build(),
    "TOON value": lambda s: response({"a": s}, data_format="toon").rule("r").build(),
}
"""Where a string lands, each with a framework tag after it."""
OPEN_MARKUP = [
    'see <b title="x',
    "see <b a='x",
    "bold <b",
    "x <b a=",
    "x </b",
    "a </",
    "a </ x",
    "a </1",
    "<script>",
    "<STYLE>",
    "<d\u043emain_rules",
]


def _fooled(result: ToolResponse) -> set[str]:
    case = case_of([], result)
    return {failure.reader for failure in check(case.blocks, case.wrappers)}


@pytest.mark.parametrize("markup", OPEN_MARKUP)
def test_markup_left_open_hides_a_framework_tag(markup: str) -> None:
    """Known gap: at every point, html.parser loses a framework tag after open markup."""
    fooled = {point: _fooled(build(markup)) for point, build in GAPS.items()}
    assert fooled == {point: set() for point in GAPS}


def test_structured_content_left_open_hides_the_next_block() -> None:
    """Known gap: a structured string "<b a='x" hides the block after its JSON text."""
    result = success_structured({"a": "<b a='x"})
    assert check((*result.blocks, RULES), (None, "domain_rules")) == []


@pytest.mark.parametrize("markup", ["<b>", "Keep <b>", "<b>tags</b>", '<b title="x">', "a < b"])
def test_complete_markup_hides_nothing(markup: str) -> None:
    """Markup that ends inside its string, like the goldens' <b>, fools no reader today."""
    for build in GAPS.values():
        assert _fooled(build(markup)) == set()


@pytest.mark.parametrize(
    "text",
    ["Keep <b>", "<b>tags</b>", "<b>ok</b>", '<b title="x">', "a < b", "</ x>", "<i>x</i>"],
)
def test_complete_markup_is_kept(text: str) -> None:
    """Markup that ends in its string is sent as it is: only what is left open changes."""
    assert neutralize(text) == text


def test_a_string_packed_with_open_tags_is_neutralized_in_linear_time() -> None:
    """Past the scan budget every candidate '<' is neutralized at once, not scanned."""
    text = "<a" * 200_000 + ">"
    assert neutralize(text) == "&lt;a" * 200_000 + ">"
