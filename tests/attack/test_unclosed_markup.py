"""Markup left open: the gap SPEC §7 as written leaves for HTML-style readers (issue 10).

SPEC §7 neutralizes a ``<`` before a reserved name, ``!`` or ``?``; it keeps ``<b>`` (a
golden pins ``Keep <b>`` in a directive). But html.parser (Python 3.11) does not stop a
tag at the end of the string the framework placed: a tag left open there runs on into
the framework's text and swallows the next tag up to its ``>``:

- ``<b title="x`` (a quote opened after ``=`` and never closed), ``<b``, ``<b a=``,
  ``</b``: the next framework tag becomes part of that tag: its attributes, or a quoted
  value running to the next ``"`` of the framework's text (``type="``), or, when the text
  ends inside the tag, plain text up to the next ``>``;
- ``</``, ``</ x``, ``</1`` (``</`` not followed by a letter, no ``>``): a bogus comment
  up to the next ``>``;
- ``<script>``, ``<style>`` without their end tag: every later block is raw text;
- a look-alike name (``<dоmain_rules``, Cyrillic o) left open: the same as ``<b``.

What gets hidden is the next framework tag after the string: the opening tag of the next
block after the data block, the closing tag of the block a rule, suggestion or UI content
sits in. Error envelopes, UI attributes and validation echoes escape every ``<`` and are
immune. The xfail tests pin each case (they pass once the rule closes the gap);
``proposed`` is the smallest rule found that closes them all and keeps every golden.
"""

from __future__ import annotations

import re
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


@pytest.mark.xfail(strict=True, reason="SPEC §7 as written keeps markup left open (issue 10)")
@pytest.mark.parametrize("markup", OPEN_MARKUP)
def test_markup_left_open_hides_a_framework_tag(markup: str) -> None:
    """Known gap: at every point, html.parser loses a framework tag after open markup."""
    fooled = {point: _fooled(build(markup)) for point, build in GAPS.items()}
    assert fooled == {point: set() for point in GAPS}


@pytest.mark.xfail(strict=True, reason="SPEC §7 as written keeps markup left open (issue 10)")
def test_structured_content_left_open_hides_the_next_block() -> None:
    """Known gap: a structured string "<b a='x" hides the block after its JSON text."""
    result = success_structured({"a": "<b a='x"})
    assert check((*result.blocks, RULES), (None, "domain_rules")) == []


@pytest.mark.parametrize("markup", ["<b>", "Keep <b>", "<b>tags</b>", '<b title="x">', "a < b"])
def test_complete_markup_hides_nothing(markup: str) -> None:
    """Markup that ends inside its string, like the goldens' <b>, fools no reader today."""
    for build in GAPS.values():
        assert _fooled(build(markup)) == set()


# -- the proposal -------------------------------------------------------------------------

_MARKUP_START = re.compile(r"<(?=/|[A-Za-z])")
_RAW_TEXT = re.compile(
    r"<(script|style|textarea|title|xmp|iframe|noembed|noframes|noscript|plaintext)(?=[\s/>]|$)",
    re.IGNORECASE,
)


def _tag_end(text: str, start: int) -> int | None:
    """Just past the ``>`` ending the tag at ``text[start]``, or None if it is left open.

    A ``"`` or ``'`` right after ``=`` (and whitespace) opens a value the same quote ends.
    """
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == ">":
            return index + 1
        if char == "=":
            value = index + 1
            while value < len(text) and text[value].isspace():
                value += 1
            if value < len(text) and text[value] in "\"'":
                close = text.find(text[value], value + 1)
                if close < 0:
                    return None
                index = close + 1
                continue
        index += 1
    return None


def proposed(text: str) -> str:
    """SPEC §7 plus the proposed clause: ``<`` before ``/`` or an ASCII letter is also
    neutralized when the tag is left open in ``text``, or opens a raw-text element whose
    end tag does not follow in ``text``."""

    def lt(match: re.Match[str]) -> str:
        end = _tag_end(text, match.start())
        if end is None:
            return "&lt;"
        raw = _RAW_TEXT.match(text, match.start())
        if raw and not re.search(rf"</{raw.group(1)}\s*>", text[end:], re.IGNORECASE):
            return "&lt;"
        return "<"

    text = neutralize(text)
    return _MARKUP_START.sub(lt, text)


@pytest.mark.parametrize("point", list(GAPS))
@pytest.mark.parametrize("markup", OPEN_MARKUP)
def test_proposed_rule_closes_the_gap(point: str, markup: str) -> None:
    """The proposed clause, applied to the string first, leaves every reader the real tags."""
    assert _fooled(GAPS[point](proposed(markup))) == set()


@pytest.mark.parametrize(
    "text",
    ["Keep <b>", "<b>tags</b>", "<b>ok</b>", "<b>fine</b>", '<b title="x">', "a < b", "</ x>"],
)
def test_proposed_rule_keeps_complete_markup(text: str) -> None:
    """The proposed clause keeps the goldens' <b> and any tag that ends in its string."""
    assert proposed(text) == text
