"""Unit tests for mcpfusion._wire.parse: content item forms, block kinds, errors."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from mcpfusion import (
    ErrorEnvelope,
    ResponseView,
    Suggestion,
    UIBlock,
    error,
    response,
    tool_error,
    ui,
)
from mcpfusion._wire.format import validation_error
from mcpfusion._wire.parse import parse_ui_block
from mcpfusion.wire import ParsedResponse, parse, parse_error


@dataclass
class TextContent:
    """Stands in for the MCP client's content objects, which carry a .text attribute."""

    text: str
    type: str = "text"


BUILT = response({"a": 1}).ui(ui.markdown("m")).rule("r").build()


def test_accepts_strings_dicts_and_objects() -> None:
    """parse reads plain strings, MCP dicts and objects with a text attribute alike."""
    as_dicts = parse(BUILT.to_mcp()["content"])
    assert parse(BUILT.blocks) == as_dicts
    assert parse([TextContent(block) for block in BUILT.blocks]) == as_dicts
    assert as_dicts.view.data == {"a": 1}
    assert as_dicts.view.system_rules == ("r",)


def test_empty_content_reads_as_nothing() -> None:
    """A foreign result with no content items (MCP allows it) parses to no data, no blocks."""
    assert parse([]) == ParsedResponse(ResponseView())


@pytest.mark.parametrize("text", ["OK", "plain text", "[not json", "nope", "", "{'a': 1}"])
def test_text_data_is_not_json(text: str) -> None:
    """A data block that is not JSON is kept as text, with is_json false."""
    parsed = parse([text])
    assert (parsed.view.data, parsed.is_json) == (text, False)


@pytest.mark.parametrize(
    ("text", "value"), [("null", None), ("-1", -1), ("[]", []), ("true", True)]
)
def test_json_data_is_decoded(text: str, value: object) -> None:
    """A JSON data block is decoded, including scalars."""
    parsed = parse([text])
    assert parsed.is_json
    assert parsed.view.data == value


def test_unknown_blocks_go_to_others() -> None:
    """A block of no known kind is kept in others, in order."""
    parsed = parse(["1", "free text", "<domain_rules>unterminated", "<x>"])
    assert parsed.others == ("free text", "<domain_rules>unterminated", "<x>")


def test_ui_and_embeds_share_ui_blocks() -> None:
    """UI and embed blocks both come back in ui_blocks, in wire order."""
    built = response(1).embed(ui.markdown("E")).ui(ui.markdown("U")).build()
    assert [b.content for b in parse(built.blocks).view.ui_blocks] == ["U", "E"]


def test_suggestion_reason_may_hold_colons() -> None:
    """A suggestion splits at the first ': ', so reasons keep theirs."""
    built = response(1).suggest("t.a", "why: because: yes").build()
    assert parse(built.blocks).view.suggestions == (Suggestion("t.a", "why: because: yes"),)


@pytest.mark.parametrize(
    "text",
    [
        '<ui_passthrough type="x">x\n</ui_passthrough>',
        '<ui_passthrough type="x">\nx</ui_passthrough>',
        '<ui_passthrough type="x">\nx\n</ui_passthrough>\n',
        '<ui_passthrough TYPE="x">\nx\n</ui_passthrough>',
        "<ui_passthrough type=x>\nx\n</ui_passthrough>",
        "<domain_rules>\n- x\n</domain_rules>",
    ],
)
def test_parse_ui_block_rejects_malformed_blocks(text: str) -> None:
    """parse_ui_block returns None unless the text follows the SPEC §4.1 template exactly."""
    assert parse_ui_block(text) is None


def test_parse_ui_block_reads_attributes_and_fence() -> None:
    """Attributes are unescaped, priority becomes an int, a fenced body is unwrapped."""
    block = ui.code_block("py", "```\nx\n```", title="a&b", width="third", priority=0)
    parsed = parse_ui_block(block.text)
    assert parsed == UIBlock(
        type="py", content=block.content, title="a&b", width="third", priority=0
    )
    assert (parsed.lang, parsed.body) == ("py", "```\nx\n```")


def test_parse_ui_block_unfenced_body_is_the_content() -> None:
    """Unfenced content has no language and its body is the content itself."""
    parsed = parse_ui_block(ui.markdown("# T\n\n`code`").text)
    assert parsed is not None
    assert (parsed.lang, parsed.body) == (None, "# T\n\n`code`")


def test_parse_error_reads_tool_error() -> None:
    """parse_error reads every element of a tool_error back, unescaped."""
    envelope = ErrorEnvelope(
        "A&B",
        "x < y & z",
        severity="critical",
        recovery="r <1>",
        available_actions=["a.b", "c<d"],
        details={"k&": "v<"},
        retry_after=0,
    )
    text = tool_error(
        envelope.code,
        envelope.message,
        severity="critical",
        recovery=envelope.recovery,
        available_actions=envelope.available_actions,
        details=envelope.details,
        retry_after=0,
    ).blocks[0]
    assert parse_error(text) == envelope


def test_parse_error_reads_validation_error() -> None:
    """A validation_error reports code VALIDATION_ERROR with the whole envelope as message."""
    text = validation_error("t/a", [("f", "bad")])
    assert parse_error(text) == ErrorEnvelope("VALIDATION_ERROR", text)


def test_parse_error_without_message_element() -> None:
    """A tool_error without a message element reads as an empty message."""
    text = '<tool_error code="C" severity="error">\n</tool_error>'
    assert parse_error(text) == ErrorEnvelope("C", "")


def test_parse_error_none_for_other_text() -> None:
    """Text that is not an error envelope gives None."""
    assert parse_error("&lt;tool_error code=") is None
    assert parse_error("OK") is None


def test_parse_sets_error_for_envelopes() -> None:
    """parse fills error for an error response and leaves it None for data."""
    parsed = parse(error("boom", code="X").blocks)
    assert parsed.error == ErrorEnvelope("X", "boom")
    assert not parsed.is_json
    assert parse(BUILT.blocks).error is None
