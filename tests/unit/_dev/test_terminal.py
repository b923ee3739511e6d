"""How the CLI labels blocks, counts tokens and colours output."""

from __future__ import annotations

import ast
import io
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

import mcpfusion._dev.terminal
from mcpfusion import ToolResponse, error, terminal, ui
from mcpfusion._present.builder import response
from mcpfusion._present.presenter import Presenter
from mcpfusion._wire.format import RESERVED_TAGS
from mcpfusion.terminal import Style, TokenCounter, classify, render_result, render_tools


class Item(BaseModel):
    """A row."""

    id: int


class Part(BaseModel):
    """A child row."""

    sku: str


def presented() -> ToolResponse:
    """A single item with a UI block, an embed, rules and a suggestion."""
    parts = Presenter("Part", schema=Part)
    parts.collection_ui(lambda rows: ui.list([r["sku"] for r in rows]))
    view = Presenter("Item", schema=Item, rules=["ids are stable"]).embed("parts", parts)
    view.ui(lambda item: ui.markdown("**item**", title="Item", width="full", priority=2))
    return view.present({"id": 1, "parts": [{"sku": "A"}]})


def test_blocks_are_classified_with_embeds_told_apart() -> None:
    """The structured view tells UI blocks from embeds; attributes go in the label."""
    labels = [(kind, label) for kind, label, _ in classify(presented())]
    assert labels == [
        ("data", "data json"),
        ("ui", 'ui type="markdown" title="Item" width="full" priority="2"'),
        ("embed", 'embed type="markdown"'),
        ("rules", "rules"),
    ]


def test_without_a_view_every_ui_block_is_ui() -> None:
    """A response with no structured view labels its UI blocks as UI, others as other."""
    built = response("text").ui(ui.summary("s")).suggest("t", "why").build()
    bare = ToolResponse((*built.blocks, "free text"))
    kinds = [kind for kind, _, _ in classify(bare)]
    assert kinds == ["data", "ui", "suggestions", "other"]


def test_error_envelopes_are_labelled_with_their_code() -> None:
    """An error envelope's label names its code and severity."""
    [(kind, label, _)] = classify(error("boom", code="E_BOOM"))
    assert (kind, label) == ("error", "error code=E_BOOM severity=error")


def test_result_shows_tokens_per_block_and_total() -> None:
    """Each label carries an o200k count; the footer sums them."""
    counter = TokenCounter()
    text = render_result(presented(), counter=counter, style=Style(colour=False))
    counts = [counter.count(block) for block in presented().blocks]
    assert f"── data json · {counts[0]} tokens" in text
    total = sum(counts)
    assert text.endswith(f"── total: 4 blocks · {total} tokens · isError=false")


def test_tools_footer_sums_the_definitions() -> None:
    """Each tool's label counts its compact JSON; the footer sums them for every prompt."""
    counter = TokenCounter()
    tools: list[dict[str, Any]] = [
        {"name": "t", "inputSchema": {}},
        {"name": "u", "description": "Two words."},
    ]
    text = render_tools(
        tools, server="s", instructions=None, counter=counter, style=Style(colour=False)
    )
    total = sum(counter.count(terminal.definition_json(tool)) for tool in tools)
    assert text.endswith(
        f"── total: 2 tools · {total} tokens (o200k, compact JSON) added to every prompt"
    )


def test_terminal_spells_no_tag_name() -> None:
    """Tag names come from wire.format (STYLE): no string literal in terminal.py holds one."""
    tree = ast.parse(Path(mcpfusion._dev.terminal.__file__).read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    spelled = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and any(tag in node.value for tag in RESERVED_TAGS)
    ]
    assert spelled == []


def test_colour_only_when_asked() -> None:
    """Labels are wrapped in ANSI colour codes only when colour is on."""
    assert Style(colour=False).paint("rules", "x") == "x"
    assert Style(colour=True).paint("rules", "x") == "\x1b[32mx\x1b[0m"


def test_tools_render_description_verbatim() -> None:
    """A description prints as text (its line breaks kept); other keys as indented JSON."""
    tool = {"name": "t", "description": "Line one.\n\nLine two.", "inputSchema": {"type": "object"}}
    text = render_tools(
        [tool],
        server="srv 1.0",
        instructions="Be brief.",
        counter=TokenCounter(),
        style=Style(colour=False),
    )
    schema = '{\n  "type": "object"\n}'
    assert f"description:\nLine one.\n\nLine two.\ninputSchema:\n{schema}" in text
    assert text.startswith("srv 1.0\n\ninstructions:\nBe brief.")


def test_a_result_a_client_received_renders_like_the_response() -> None:
    """The CallToolResult JSON (dict or object content items) renders as the response does."""
    built = response({"a": 1}).ui(ui.summary("s")).rule("r").build()
    style, counter = Style(colour=False), TokenCounter()
    expected = render_result(built, counter=counter, style=style)
    wire = built.to_mcp()
    assert render_result(wire, counter=counter, style=style) == expected
    objects = {**wire, "content": [SimpleNamespace(text=b) for b in built.blocks]}
    assert render_result(objects, counter=counter, style=style) == expected


def test_client_result_keeps_error_flag_and_structured_content() -> None:
    """``isError`` and ``structuredContent`` of a received result reach the footer."""
    wire = {"content": [{"type": "text", "text": "{}"}], "isError": True, "structuredContent": {}}
    text = render_result(wire, counter=TokenCounter(), style=Style(colour=False))
    assert text.endswith("isError=true · structuredContent (the data block's value)")


def test_max_lines_cuts_long_blocks_but_counts_them_whole() -> None:
    """Past ``max_lines`` (+2) a block is cut with a note; its count is of the whole block."""
    long_text, short_text = "\n".join(map(str, range(30))), "\n".join(map(str, range(7)))
    built = response(long_text).rule(short_text.replace("\n", " ")).build()
    counter = TokenCounter()
    text = render_result(built, counter=counter, style=Style(colour=False), max_lines=5)
    assert f"── data · {counter.count(long_text)} tokens\n0\n1\n2\n3\n4\n" in text
    assert "\n  ┆ … 25 more lines (the agent receives all of them)\n── rules" in text
    whole = response(short_text).build()
    assert short_text in render_result(
        whole, counter=counter, style=Style(colour=False), max_lines=5
    )


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        """Always a terminal."""
        return True


@pytest.mark.parametrize(
    ("stream", "environ", "colour"),
    [
        (Terminal(), {}, True),
        (Terminal(), {"NO_COLOR": "1"}, False),
        (Terminal(), {"NO_COLOR": ""}, True),
        (io.StringIO(), {}, False),
    ],
)
def test_colour_rule(stream: io.StringIO, environ: dict[str, str], colour: bool) -> None:
    """Colour only on a terminal, and never when NO_COLOR is set to something (no-color.org)."""
    assert Style.for_stream(stream, environ).colour is colour
