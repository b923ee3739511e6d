"""The renderer in Chromium on results built to break it: deep nesting, nested chart options."""

from __future__ import annotations

from typing import Any

import pytest

from mcpfusion import response, ui
from tests.browser.test_renderer_hostile import nothing_ran, page, render
from tests.browser.webdriver import Browser

__all__ = ["page"]

pytestmark = pytest.mark.slow

NESTED_QUOTES = ">" * 1700 + " deep"
"""1.7 KB of nested blockquote markers: past marked's recursion before nesting was bounded."""
NESTED_LISTS = "- " * 2500 + "deep"
"""Nested list markers, which marked also parses by recursion."""
TIP = "<img src=x onerror=window.__executed.push('tip')>"

BLOCKS = """
return [...document.querySelectorAll("#mcpfusion-root [data-kind]")].map((node) =>
  node.dataset.kind + ":" + (node.dataset.type || ""));
"""
DEPTH = """
let deepest = 0;
for (const node of document.querySelectorAll(".mf-markdown blockquote, .mf-markdown li")) {
  let depth = 0;
  for (let up = node; up; up = up.parentElement) {
    if (up.tagName === node.tagName) depth += 1;
  }
  deepest = Math.max(deepest, depth);
}
return deepest;
"""
BOOM = """
const Real = window.DOMPurify;
window.DOMPurify = (target) => {
  const purifier = Real(target);
  const sanitize = purifier.sanitize.bind(purifier);
  purifier.sanitize = (html, config) => {
    if (String(html).includes("boom")) throw new RangeError("Maximum call stack size exceeded");
    return sanitize(html, config);
  };
  return purifier;
};
"""
SHOW_TIP = """
const chart = echarts.getInstanceByDom(document.querySelector('.mf-chart'));
chart.dispatchAction({type: 'showTip', seriesIndex: 0, dataIndex: 0});
return document.querySelector('.mf-chart').innerHTML.includes('<img');
"""


def deep_result() -> dict[str, Any]:
    """Deep markdown between ordinary blocks, with a rule after them."""
    built = (
        response({"id": 1})
        .ui(
            ui.markdown("before"),
            ui.markdown(NESTED_QUOTES),
            ui.markdown(NESTED_LISTS),
            ui.table(["a"], [[1]], title="after"),
        )
        .rule("Amounts are in cents.")
    )
    return built.build().to_mcp()


def test_deep_markdown_nesting_is_bounded_and_every_block_renders(
    browser: Browser, page: str
) -> None:
    """1.7 KB of nested '>' renders bounded, and the other blocks and the rule render too."""
    render(browser, page, deep_result())
    assert browser.execute(BLOCKS) == [
        "ui:markdown",
        "ui:markdown",
        "ui:markdown",
        "ui:markdown",
        "rules:",
    ]
    markdown = browser.execute(
        "return [...document.querySelectorAll('.mf-markdown')].map((n) => n.textContent)"
    )
    assert markdown[0].strip() == "before"
    # Nothing is lost: the markers past the bound are shown as text.
    assert "deep" in markdown[1] and markdown[1].count(">") == 1700 - 32
    assert "deep" in markdown[2]
    assert browser.execute(DEPTH) == 32
    assert browser.execute("return document.querySelector('.mf-failure')") is None
    assert "Amounts are in cents." in browser.execute(
        "return document.querySelector('[data-kind=rules]').textContent"
    )
    nothing_ran(browser)


def test_a_block_that_fails_to_render_leaves_the_others(browser: Browser, page: str) -> None:
    """A block whose rendering throws shows as a failure with its text; the rest renders."""
    browser.get(page)
    # A sanitizer that throws stands for any failure inside one block's rendering.
    browser.execute(BOOM)
    result = response("x").ui(ui.markdown("boom"), ui.markdown("fine")).rule("kept").build()
    assert browser.execute_async(
        "const done = arguments[arguments.length - 1];"
        "mcpfusion.render(arguments[0]).then(() => done(null), (e) => done(String(e)));",
        result.to_mcp(),
    ) is None
    failure = browser.execute("return document.querySelector('.mf-failure').textContent")
    assert failure == "This block could not be shown: Maximum call stack size exceeded"
    assert browser.execute("return document.querySelector('.mf-failure + pre').textContent") == (
        "boom"
    )
    texts = browser.execute(
        "return [...document.querySelectorAll('.mf-markdown')].map((n) => n.textContent)"
    )
    assert [text.strip() for text in texts] == ["fine"]
    assert "kept" in browser.execute(
        "return document.querySelector('[data-kind=rules]').textContent"
    )


@pytest.mark.parametrize(
    "option",
    [
        {"baseOption": {"tooltip": {"formatter": TIP}}},
        {"baseOption": {}, "options": [{"tooltip": {"formatter": TIP}}]},
        {"baseOption": {}, "media": [{"option": {"tooltip": [{"formatter": TIP}]}}]},
        {"tooltip": {"show": True}, "series": [{"tooltip": {"formatter": TIP}}]},
    ],
    ids=["baseOption", "options", "media", "series"],
)
def test_nested_chart_tooltips_are_drawn_as_text(
    browser: Browser, page: str, option: dict[str, Any]
) -> None:
    """A tooltip under baseOption, options, media or a series shows its markup as text."""
    chart: dict[str, Any] = {
        "xAxis": {"type": "category", "data": ["a"]},
        "yAxis": {"type": "value"},
        "series": [{"type": "bar", "data": [3]}],
    }
    base = option.get("baseOption")
    if base is not None:
        option = {**option, "baseOption": {**chart, **base}}
    else:
        option = {**chart, **option, "series": [{**chart["series"][0], **option["series"][0]}]}
    render(browser, page, response("x").ui(ui.echarts(option)).build().to_mcp())
    assert browser.execute(SHOW_TIP) is False
    nothing_ran(browser)

