"""``mcpfusion.wire.parse`` never raises on foreign input, however broken (issue 10).

The parser reads any server's results: every path (data decoding, UI attributes and
priority, bullet and suggestion lines, both error envelopes, retry seconds) is fed junk
built from the wire format's own fragments, arbitrary text and odd content items.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mcpfusion.wire import ParsedResponse, parse, parse_error, parse_ui_block

_FRAGMENTS = [
    '<ui_passthrough type="',
    '<ui_passthrough type="x">\n',
    "\n</ui_passthrough>",
    ' title="',
    ' width="half"',
    ' priority="',
    '"',
    ">\n",
    "<llm_directives>\n",
    "\n</llm_directives>",
    "<domain_rules>\n",
    "\n</domain_rules>",
    "<action_suggestions>\n",
    "\n</action_suggestions>",
    "- ",
    "tool.name: ",
    ": ",
    '<tool_error code="',
    '" severity="',
    '">',
    "<message>",
    "</message>",
    "<recovery>",
    "</recovery>",
    "<available_actions>\n  <action>",
    "</action>",
    '<detail key="',
    "</detail>",
    "<retry_after>",
    " seconds</retry_after>",
    "</tool_error>",
    "<validation_error ",
    "</validation_error>",
    "```json\n",
    "\n```",
    "{",
    "[",
    "]",
    "}",
    "1e999999",
    "9" * 5000,
    "-" * 3,
    "&#x0;",
    "&#xd800;",
    "&#10;",
    "&amp;",
    "&lt;",
    "\ud800",
    "\x00",
    "\n",
    "\u2028",
    "٣",
    "²",
]

junk_text = st.lists(st.sampled_from(_FRAGMENTS) | st.text(max_size=8), max_size=12).map("".join)
"""Text assembled from the wire format's fragments and arbitrary characters."""


class _Item:
    """A content item of some client library: anything may sit in ``text``."""

    def __init__(self, text: Any) -> None:
        self.text = text


odd_values = st.none() | st.integers() | st.floats() | st.lists(st.integers(), max_size=2)
content_items = st.one_of(
    junk_text,
    st.builds(lambda t: {"type": "text", "text": t}, junk_text | odd_values),
    st.builds(lambda d: {"type": "image", "data": d, "mimeType": "image/png"}, st.text()),
    st.dictionaries(st.text(max_size=4), odd_values, max_size=3),
    st.builds(_Item, junk_text | odd_values),
    st.builds(object),
)


@given(st.lists(junk_text, max_size=6))
def test_parse_never_raises_on_junk_text(texts: list[str]) -> None:
    """Junk text in any number of blocks parses to a ParsedResponse, never an exception."""
    assert isinstance(parse(texts), ParsedResponse)


@given(st.lists(content_items, max_size=6))
def test_parse_never_raises_on_odd_content_items(items: list[Any]) -> None:
    """Dicts without text, non-str text, image items and bare objects never make it raise."""
    assert isinstance(parse(items), ParsedResponse)


@given(junk_text)
def test_block_readers_never_raise(text: str) -> None:
    """parse_ui_block and parse_error return a value or None for any text."""
    parse_ui_block(text)
    parse_error(text)
