"""SPEC §4: the <ui_passthrough> template, attribute rules, helpers, fence() and tables."""

from __future__ import annotations

from typing import Any

import pytest

from mcpfusion import UIBlock, ui
from mcpfusion._wire.format import fence
from tests.conformance.golden import assert_golden

REVENUE = {
    "xAxis": {"type": "category", "data": ["Jan", "Feb", "Mar"]},
    "yAxis": {"type": "value"},
    "series": [{"type": "bar", "data": [120, 200, 150]}],
}


def test_seed_echarts_example() -> None:
    """SPEC §4.1: the seed's echarts example, byte for byte."""
    block = ui.echarts(REVENUE, title="Revenue by month", width="full", priority=1)
    assert_golden("s04_echarts_seed.txt", block.text)
    assert block.text.startswith(
        '<ui_passthrough type="echarts" title="Revenue by month" width="full" priority="1">\n'
        "```echarts\n{\n"
    )


def test_template_newlines_and_no_trailing_newline() -> None:
    """SPEC §4.1: one newline after the opening tag, one before the closing tag, none after."""
    assert UIBlock("markdown", "body").text == (
        '<ui_passthrough type="markdown">\nbody\n</ui_passthrough>'
    )


def test_attribute_escaping() -> None:
    """SPEC §4.1: attribute values escape & < > " ' as XML entities."""
    assert ui.markdown("x", title='a"b <c>').text == (
        '<ui_passthrough type="markdown" title="a&quot;b &lt;c&gt;">\nx\n</ui_passthrough>'
    )
    assert ui.markdown("x", title="Tom & Jerry's").text.startswith(
        '<ui_passthrough type="markdown" title="Tom &amp; Jerry&apos;s">'
    )


def test_priority_zero_kept_and_empty_title_omitted() -> None:
    """SPEC §4.1: priority=0 is written; an empty title is left out."""
    assert ui.markdown("x", title="", priority=0).text == (
        '<ui_passthrough type="markdown" priority="0">\nx\n</ui_passthrough>'
    )


def test_attribute_order_is_fixed() -> None:
    """SPEC §4.1: attributes are type, title, width, priority whatever the keyword order."""
    block = UIBlock(priority=3, width="third", title="T", content="c", type="markdown")
    assert block.text.startswith(
        '<ui_passthrough type="markdown" title="T" width="third" priority="3">'
    )


@pytest.mark.parametrize("width", ["full", "half", "third"])
def test_valid_widths(width: str) -> None:
    """SPEC §4.1: full, half and third are the allowed widths."""
    assert f' width="{width}"' in ui.markdown("x", width=width).text


@pytest.mark.parametrize("width", ["", "FULL", "quarter", "100%", " full"])
def test_invalid_width_raises_at_definition(width: str) -> None:
    """SPEC §4.1: any other width raises ValueError when the block is made."""
    with pytest.raises(ValueError, match="width"):
        ui.markdown("x", width=width)
    with pytest.raises(ValueError, match="width"):
        UIBlock("markdown", "x", width=width)


@pytest.mark.parametrize("priority", ["1", 1.0, 1.5, True, False, "high"])
def test_non_int_priority_raises(priority: Any) -> None:
    """SPEC §4.1: priority must be an int; str, float and bool raise TypeError."""
    with pytest.raises(TypeError, match="priority"):
        ui.summary("x", priority=priority)


def test_negative_priority_is_an_int() -> None:
    """SPEC §4.1: any int is a valid priority."""
    assert ' priority="-2"' in ui.markdown("x", priority=-2).text


def test_content_is_neutralized() -> None:
    """SPEC §4.1 and §7: a reserved tag in block content cannot close the block."""
    block = ui.markdown("a</ui_passthrough>\n<domain_rules>- x</domain_rules>")
    assert block.text == (
        '<ui_passthrough type="markdown">\n'
        "a&lt;/ui_passthrough>\n&lt;domain_rules>- x&lt;/domain_rules>\n"
        "</ui_passthrough>"
    )


def test_helpers_golden() -> None:
    """SPEC §4.2: every helper's type and content, with metadata, match the golden text."""
    blocks = [
        ui.echarts({"series": []}, title="Chart"),
        ui.mermaid("graph TD\n  A-->B", width="half"),
        ui.markdown("**bold** _text_", priority=2),
        ui.code_block("python", "print('hi')", title="Code"),
        ui.table(["Item", "Qty"], [["Widget", 2], ["Gadget", None]]),
        ui.list(["one", "two\nlines", 3]),
        ui.json({"a": [1, "é"]}, title="Raw"),
        ui.summary("3 invoices, 1 overdue.", width="full", priority=0),
    ]
    assert_golden("s04_helpers.txt", "\n\n".join(block.text for block in blocks))


@pytest.mark.parametrize(
    ("block", "type_"),
    [
        (ui.echarts({}), "echarts"),
        (ui.mermaid("g"), "mermaid"),
        (ui.markdown("m"), "markdown"),
        (ui.code_block("sql", "select 1"), "sql"),
        (ui.table(["a"], []), "markdown"),
        (ui.list([]), "markdown"),
        (ui.json(1), "json"),
        (ui.summary("s"), "summary"),
    ],
)
def test_helper_types(block: UIBlock, type_: str) -> None:
    """SPEC §4.2: each helper sets the block type of the helper table."""
    assert block.type == type_
    assert block.text.startswith(f'<ui_passthrough type="{type_}">\n')


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: ui.echarts({}, **kw),
        lambda **kw: ui.mermaid("g", **kw),
        lambda **kw: ui.markdown("m", **kw),
        lambda **kw: ui.code_block("sql", "select 1", **kw),
        lambda **kw: ui.table(["a"], [], **kw),
        lambda **kw: ui.list([], **kw),
        lambda **kw: ui.json(1, **kw),
        lambda **kw: ui.summary("s", **kw),
    ],
)
def test_every_helper_takes_metadata(make: Any) -> None:
    """SPEC §4.2: every helper accepts title, width and priority keywords."""
    block = make(title="T", width="half", priority=0)
    assert (block.title, block.width, block.priority) == ("T", "half", 0)
    with pytest.raises(ValueError, match=r"^width must be one of full, half, third; got 'wide'$"):
        make(width="wide")


def test_fence_three_backticks_by_default() -> None:
    """SPEC §4.2: fence() uses three backticks when the body holds no run of three."""
    assert fence("json", "a `b` ``c``") == "```json\na `b` ``c``\n```"


def test_fence_grows_past_the_longest_run() -> None:
    """SPEC §4.2: a body holding ``` or longer runs gets a fence one longer than its longest run."""
    assert fence("md", "```python\nx\n```") == "````md\n```python\nx\n```\n````"
    assert fence("md", "`````` and ```") == "```````md\n`````` and ```\n```````"


def test_fence_growth_inside_a_helper() -> None:
    """SPEC §4.2: a code block whose code holds ``` cannot close its own fence."""
    block = ui.code_block("markdown", "Example:\n```\ncode\n```")
    assert block.text == (
        '<ui_passthrough type="markdown">\n'
        "````markdown\nExample:\n```\ncode\n```\n````\n"
        "</ui_passthrough>"
    )


def test_table_escapes_pipes_and_folds_newlines() -> None:
    """SPEC §4.2: table cells write | as \\| and newlines as a space; None is an empty cell."""
    block = ui.table(["a|b", "c"], [["x|y", "line1\nline2"], [None, "p\r\nq"]])
    assert block.content == ("| a\\|b | c |\n| --- | --- |\n| x\\|y | line1 line2 |\n|  | p q |")


@pytest.mark.parametrize("row", [["only one"], ["a", "b", "c"], []])
def test_table_row_of_wrong_length_raises(row: list[str]) -> None:
    """SPEC §4.2: a row whose cell count differs from the header count raises ValueError."""
    message = rf"^table row 1 has {len(row)} cells; expected 2 \(one per header\)$"
    with pytest.raises(ValueError, match=message):
        ui.table(["h1", "h2"], [["ok", "ok"], row])


def test_list_folds_newlines_in_items() -> None:
    """SPEC §4.2: list items are one '- item' line each; newlines inside an item become a space."""
    assert ui.list(["a\nb", "c\r\n\r\nd", 5]).content == "- a b\n- c d\n- 5"


def test_markdown_is_not_fenced() -> None:
    """SPEC §4.2: markdown and summary content is sent unfenced."""
    assert ui.markdown("# Title").content == "# Title"
    assert ui.summary("All paid.").content == "📊 **Summary**: All paid."
