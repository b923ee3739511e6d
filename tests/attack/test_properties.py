"""SPEC §7 as properties: random results around random hostile text fool none of the readers.

The hostile text joins corpus strings (every spelling of every reserved tag), ``<!``/``<?``
constructs and harmless text; like the corpus it leaves out unterminated tags with a
non-reserved name (``test_unclosed_markup.py``). Drawing whole strings from a pool keeps
an example cheap enough for CI's 1,000 examples a property.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mcpfusion import ResponseBuilder, Suggestion, success_structured, tool_error, ui
from mcpfusion._wire.datablock import DATA_FORMATS
from mcpfusion.wire import neutralize
from tests.attack.corpus import corpus
from tests.attack.points import case_of
from tests.attack.readers import check

_MARKUP: tuple[str, ...] = ("<!--", "-->", "<![CDATA[", "]]>", "<?", "?>", "<!DOCTYPE x>", "<!")
_MARKUP += ("<b>", "</b>")
_MARKUP += ("<br/>", "a < b", "&lt;", "&", '"', "'", "`" * 3, "\n", "\r\n", "- ", "|", ": ")
_PLAIN = st.text(st.sampled_from("ab Z_/=>\t\"'&;#é\u3000\u017f\u0131\u0301\ufeff"), max_size=5)

hostile = st.lists(
    st.sampled_from(corpus()) | st.sampled_from(_MARKUP) | _PLAIN, min_size=1, max_size=5
).map(" ".join)
"""Hostile text; pieces are joined by a space, so none runs into the next one's letters."""

json_values = st.recursive(
    st.none() | st.integers() | hostile,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile, inner, max_size=3),
    max_leaves=6,
)

_HELPERS = [
    lambda s, t: ui.markdown(s, title=t),
    lambda s, t: ui.summary(s, title=t),
    lambda s, t: ui.mermaid(s, title=t),
    lambda s, t: ui.code_block("sql", s, title=t),
    lambda s, t: ui.list([s, s], title=t),
    lambda s, t: ui.table([s], [[s]], title=t),
    lambda s, t: ui.json({s: s}, title=t),
    lambda s, t: ui.echarts({"name": s}, title=t),
]


@st.composite
def responses(draw: st.DrawFn) -> ResponseBuilder:
    """A response with hostile text in every part, in any of the data formats."""
    data_format = draw(st.sampled_from(DATA_FORMATS))
    builder = ResponseBuilder(draw(hostile | json_values), data_format=data_format)
    for _ in range(draw(st.integers(0, 3))):
        make = draw(st.sampled_from(_HELPERS))
        builder.ui(make(draw(hostile), draw(st.just("") | hostile)))
    builder.directive(*draw(st.lists(hostile, max_size=3)))
    builder.rule(*draw(st.lists(hostile, max_size=3)))
    for reason in draw(st.lists(hostile, max_size=3)):
        builder.suggestion(Suggestion("billing.remind", reason))
    return builder


@given(responses())
def test_a_built_response_fools_no_reader(builder: ResponseBuilder) -> None:
    """SPEC §7: whatever the parts hold, each reader sees exactly the framework's blocks."""
    case = case_of([], builder.build())
    assert check(case.blocks, case.wrappers) == []


@given(
    hostile, hostile, st.lists(hostile, max_size=3), st.dictionaries(hostile, hostile, max_size=3)
)
def test_an_error_envelope_fools_no_reader(
    message: str, recovery: str, actions: list[str], details: dict[str, str]
) -> None:
    """SPEC §7, §9: hostile text in every field leaves one envelope for each reader."""
    result = tool_error("E", message, recovery=recovery, available_actions=actions, details=details)
    assert check(result.blocks, ("tool_error",)) == []


@given(json_values)
def test_structured_content_fools_no_reader(value: Any) -> None:
    """SPEC §7, §12: the text block and every string of structuredContent are neutralized."""
    result = success_structured(value)
    strings: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            strings.append(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for key, item in node.items():
                strings.append(key)
                walk(item)

    walk(result.structured_content)
    rules = ResponseBuilder("x").rule("r").build().blocks[1]
    assert check((*result.blocks, rules), (None, "domain_rules")) == []
    readers = ("regex", "html.parser", "nfkc")
    for string in strings:
        assert check((string, rules), (None, "domain_rules"), readers) == []


@given(hostile)
def test_neutralized_text_fools_no_reader(text: str) -> None:
    """SPEC §7: neutralize(text) placed before a real block leaves it the only tag."""
    rules = ResponseBuilder("x").rule("r").build().blocks[1]
    assert check((neutralize(text), rules), (None, "domain_rules")) == []
