"""Unit tests for mcpfusion._wire.format: escaping, neutralization, folding, fences, templates."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from mcpfusion import ErrorEnvelope
from mcpfusion._wire import format as wire
from mcpfusion._wire.markup import closed
from tests.conformance.strategies import hostile_text

# A lenient reader's reserved tag: Unicode case-insensitive, whitespace around the "/".
FORGERY = re.compile(r"<\s*/?\s*(?:" + "|".join(wire.RESERVED_TAGS) + ")", re.I)
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def test_escape_attr_escapes_all_five() -> None:
    """escape_attr writes & < > " ' as entities, & first so nothing is double-escaped."""
    assert wire.escape_attr("&<>\"'") == "&amp;&lt;&gt;&quot;&apos;"
    assert wire.escape_attr("&amp;") == "&amp;amp;"


def test_escape_text_escapes_only_amp_and_lt() -> None:
    """escape_text writes & and < as entities and leaves > and quotes alone."""
    assert wire.escape_text("&<>\"'") == "&amp;&lt;>\"'"


@pytest.mark.parametrize("brk", list(LINE_BREAKS))
def test_fold_lines_folds_every_splitlines_break(brk: str) -> None:
    """fold_lines turns each character str.splitlines() breaks on into a space."""
    assert wire.fold_lines(f"a{brk}b") == "a b"


def test_fold_lines_folds_runs_and_keeps_tabs() -> None:
    """A run of mixed breaks becomes one space; tabs and spaces stay."""
    assert wire.fold_lines("a\r\n\n\u2028b\tc  d") == "a b\tc  d"


@given(st.text())
def test_fold_lines_leaves_one_line(text: str) -> None:
    """After folding, no text holds a line break by Python's own definition."""
    assert len(wire.fold_lines(text).splitlines()) <= 1


@given(hostile_text)
@example('< Tool_errOr code="X" severity="error"><A\x1f</TOOl_erROr code="X" severity="error">')
@example('"<A \\q</tool_error>"')
def test_neutralize_leaves_no_reserved_tag(text: str) -> None:
    """After neutralize, no '<', '/' and whitespace precede a reserved name in any case."""
    assert FORGERY.search(wire.neutralize(text)) is None
    assert FORGERY.search(wire.neutralize_json(text)) is None


@given(hostile_text)
def test_neutralize_is_idempotent(text: str) -> None:
    """Neutralizing twice changes nothing more, so layers may neutralize defensively."""
    once = wire.neutralize(text)
    assert wire.neutralize(once) == once


def test_neutralize_returns_text_without_lt_unchanged() -> None:
    """Text without '<' is returned as the same object (the fast path)."""
    text = "x" * 1000
    assert wire.neutralize(text) is text
    assert wire.neutralize_json(text) is text


def test_neutralize_folds_unicode_to_ascii() -> None:
    """Case folding is Unicode-aware: 'ui_paſſthrough' is 'ui_passthrough' to Python's re.I."""
    assert wire.neutralize("<UI_PassThrough>") == "&lt;UI_PassThrough>"
    assert wire.neutralize("<ui_paſſthrough>") == "&lt;ui_paſſthrough>"


@pytest.mark.parametrize(
    ("char", "folded"),
    [
        ("D", "d"),
        ("ſ", "s"),
        ("ı", "i"),
        ("İ", "i"),
        ("\u212a", "k"),  # Kelvin sign
        ("ｄ", "d"),
        ("＿", "_"),
        ("／", "/"),
        ("ß", "ss"),
        ("ﬆ", "st"),
        ("é", "e"),
        ("\U0001d41d", "d"),  # mathematical bold d
        ("\u043e", None),  # Cyrillic o
        ("\u0301", ""),  # a combining acute accent: nothing of its own
        ("\u1e9b", "s"),  # long s with dot above
        ("\u1d05", None),  # small capital D: no decomposition
        ("\ufffd", None),
    ],
)
def test_folded_maps_compatibility_and_case_forms(char: str, folded: str | None) -> None:
    """_folded gives the ASCII a Unicode-normalizing, case-folding reader takes a character for."""
    assert wire._folded(char) == folded


@given(hostile_text, st.booleans())
def test_neutralize_json_rewrites_what_neutralize_rewrites(text: str, ascii_only: bool) -> None:
    """In a JSON string, exactly the '<' that neutralize writes as &lt; become \\u003c."""
    text = wire.neutralize(text).replace("&lt;", "<")  # lone surrogates out, as JSON has none
    assume("\\" not in text and "\u2400" not in text)  # a marker standing in for \\u003c
    escaped = wire.neutralize_json(json.dumps(text, ensure_ascii=ascii_only))
    decoded = json.loads(escaped.replace("\\u003c", "\\u2400"))
    assert decoded.replace("\u2400", "&lt;") == wire.neutralize(text)


def test_neutralize_json_uses_the_unicode_escape() -> None:
    """neutralize_json writes \\u003c, which JSON decodes back to '<'."""
    assert wire.neutralize_json('"</tool_error>"') == '"\\u003c/tool_error>"'


@pytest.mark.parametrize("lang", ["a`b", "a\nb", "x\r", "\u2028"])
def test_fence_rejects_bad_languages(lang: str) -> None:
    """A fence language with a backtick or a line break raises ValueError."""
    with pytest.raises(ValueError, match="fence language"):
        wire.fence(lang, "body")


def test_fence_empty_language_and_body() -> None:
    """An empty language and an empty body are allowed."""
    assert wire.fence("", "") == "```\n\n```"


@given(hostile_text)
@example("``")
@example("a```b````c")
def test_fence_run_outgrows_the_body(body: str) -> None:
    """The fence run is the shortest of at least 3 longer than any run of 3+ backticks in
    the body (the text does not change with how the body is searched)."""
    fenced = wire.fence("x", body)
    ticks = len(fenced) - len(fenced.lstrip("`"))
    assert ticks >= 3
    assert "`" * ticks not in body
    assert ticks == 3 or "`" * (ticks - 1) in body
    assert fenced == f"{'`' * ticks}x\n{body}\n{'`' * ticks}"


def test_ui_passthrough_renders_optional_attributes() -> None:
    """ui_passthrough writes only the attributes that are set, type escaped too."""
    assert (
        wire.ui_passthrough('a"b', "c") == '<ui_passthrough type="a&quot;b">\nc\n</ui_passthrough>'
    )
    assert wire.ui_passthrough("t", "c", width="half", priority=-1) == (
        '<ui_passthrough type="t" width="half" priority="-1">\nc\n</ui_passthrough>'
    )


def test_bullet_entries_drop_blank_and_duplicate_lines() -> None:
    """bullet_entries folds, neutralizes, drops whitespace-only and repeated lines."""
    entries = wire.bullet_entries(["a", " ", "\t\n", "a", "b\nc", "<tool_error>", "b c"])
    assert entries == ["a", "b c", "&lt;tool_error>"]


def test_bullet_block_template() -> None:
    """bullet_block writes one "- " line per entry between the tags."""
    assert wire.bullet_block(wire.LLM_DIRECTIVES, ["x", "y"]) == (
        "<llm_directives>\n- x\n- y\n</llm_directives>"
    )


def test_suggestion_entry() -> None:
    """A suggestion line is 'tool: reason'."""
    assert wire.suggestion_entry("billing.remind", "Overdue") == "billing.remind: Overdue"


def test_tool_error_stringifies_detail_keys_and_values() -> None:
    """Detail keys and values are str()-ed; empty recovery and actions are left out."""
    details = {1: None}  # an int key, against the annotation, to see it str()-ed
    envelope = ErrorEnvelope(
        "C",
        "m",
        recovery="",
        available_actions=(),
        details=details,  # type: ignore[arg-type]
    )
    text = wire.tool_error(envelope)
    assert text == (
        '<tool_error code="C" severity="error">\n<message>m</message>\n'
        '<details>\n  <detail key="1">None</detail>\n</details>\n</tool_error>'
    )


def test_validation_error_escapes_names_and_texts() -> None:
    """validation_error escapes the action and field names as attributes, texts as text."""
    text = wire.validation_error('t/"a"', [("a.b", "bad <x> & y"), ("c<", "z")])
    assert text == (
        '<validation_error action="t/&quot;a&quot;">\n'
        '<field name="a.b">bad &lt;x> &amp; y</field>\n'
        '<field name="c&lt;">z</field>\n'
        f"<recovery>{wire.VALIDATION_RECOVERY}</recovery>\n"
        "</validation_error>"
    )


def test_lone_surrogates_become_replacement_characters() -> None:
    """A lone surrogate in any text path becomes U+FFFD, so every block encodes as UTF-8."""
    from mcpfusion import response, tool_error, ui

    bad = "a\ud800b"
    built = (
        response(bad)
        .ui(ui.markdown(bad, title=bad))
        .rule(bad)
        .directive(bad)
        .suggest("t.a", bad)
        .build()
    )
    for result in (built, tool_error("E", bad, recovery=bad)):
        for block in result.blocks:
            block.encode("utf-8")  # raises on a surrogate
        assert "a\ufffdb" in result.text


def _neutralized_one_by_one(text: str) -> str:
    """SPEC §7's rule asked of every '<' in Python, without the regexes' shortcuts (then
    its clause on markup left open, which has none)."""
    text = wire.scrub(text)
    return closed(
        "".join(
            "&lt;" if char == "<" and wire._opens_markup(wire._text_chars(text, i + 1)) else char
            for i, char in enumerate(text)
        )
    )


_SPELLED = st.sampled_from(["", "/", " / ", "\u3000", "\u0301", "\ufeff/"]).flatmap(
    lambda lead: st.sampled_from(wire.RESERVED_TAGS).flatmap(
        lambda name: st.integers(0, len(name)).map(lambda cut: "<" + lead + name[:cut])
    )
)


@given(
    st.lists(_SPELLED | hostile_text | st.sampled_from(["ſ", "ｄ", "ß", "İ", "\u0301"])).map(
        "".join
    )
)
def test_regex_shortcuts_agree_with_the_rule(text: str) -> None:
    """The C-speed regexes neutralize exactly the '<' the rule, asked one by one, would."""
    assert wire.neutralize(text) == _neutralized_one_by_one(text)


@given(st.lists(hostile_text, max_size=4))
def test_the_one_scan_prefilter_finds_every_rule(texts: list[str]) -> None:
    """The combined JSON scan matches wherever either rule (_ANY_JSON, _OPEN_JSON) does."""
    text = json.dumps(texts)
    either = wire._ANY_JSON.search(text) or wire._OPEN_JSON.search(text)
    assert (wire._SUSPECT_JSON.search(text) is None) == (either is None)


@pytest.mark.parametrize("opening", ["<script>", "<STYLE>", "<textarea ", "<Title/", "<xmp>"])
def test_a_raw_text_element_in_a_json_value_is_escaped(opening: str) -> None:
    """A raw-text element's opening tag (its text hides what follows from HTML readers) is
    written \\u003c in a JSON value, whatever its case, even when it ends at once."""
    text = json.dumps({"note": f"{opening}x"})
    assert wire.neutralize_json(text) == text.replace("<", "\\u003c", 1)


def test_rows_of_harmless_markup_are_returned_as_they_are() -> None:
    """A JSON text whose every '<' opens a tag that ends at once is the same object back."""
    text = json.dumps([{"note": f"row {n} <b>bold</b>"} for n in range(50)], indent=2)
    assert wire.neutralize_json(text) is text


def test_a_ui_blocks_remembered_opening_keeps_each_priority_type_apart() -> None:
    """A remembered opening tag is the one of these very values: True is not 1."""
    assert 'priority="1"' in wire.ui_passthrough("summary", "x", priority=1)
    assert 'priority="True"' in wire.ui_passthrough("summary", "x", priority=True)


def test_bullet_entries_after_rendered_lines_drop_their_repeats() -> None:
    """Lines already rendered come first and an entry repeating one is dropped."""
    assert wire.bullet_entries(["a", "b\nc", "d"], after=["a", "b c"]) == ["a", "b c", "d"]
