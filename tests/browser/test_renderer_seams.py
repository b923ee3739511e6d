"""The renderer in Chromium on results built to break it: deep nesting, nested chart options."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcpfusion import response, ui
from tests.attack.test_seams_renderer import APP_URI, TARGET, read_text
from tests.browser.test_renderer_hostile import nothing_ran, page, render
from tests.browser.test_ui_app import inline
from tests.browser.webdriver import Browser
from tests.e2e.servers import http_server

__all__ = ["page"]

pytestmark = pytest.mark.slow

# A host of MCP Apps (SEP-1865) that also forwards the view's resources/read: from the
# parts read over HTTP beforehand, or, with READS = null, answering that it cannot.
HOST = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>host</title></head>
<body><iframe id="app" sandbox="allow-scripts" style="width:1200px;height:900px"></iframe>
<script>
const frame = document.getElementById("app");
const result = RESULT;
const reads = READS;
window.hostLog = [];
function answer(message) { frame.contentWindow.postMessage(message, "*"); }
window.addEventListener("message", (event) => {
  if (event.source !== frame.contentWindow) return;
  const message = event.data;
  window.hostLog.push(message.method || "response");
  if (message.method === "ui/initialize") {
    answer({jsonrpc: "2.0", id: message.id, result: {
      protocolVersion: message.params.protocolVersion,
      hostInfo: {name: "test-host", version: "1.0.0"},
      hostCapabilities: {}, hostContext: {theme: "light"}}});
  } else if (message.method === "ui/notifications/initialized") {
    answer({jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result});
  } else if (message.method === "resources/read") {
    const uri = message.params.uri;
    if (reads === null || !(uri in reads)) {
      answer({jsonrpc: "2.0", id: message.id, error: {code: -32601, message: "Method not found"}});
    } else {
      answer({jsonrpc: "2.0", id: message.id, result: {contents: [
        {uri, mimeType: "text/javascript", text: reads[uri]}]}});
    }
  }
});
frame.srcdoc = DOCUMENT;
</script></body></html>
"""
RENDERED = (
    "const root = document.getElementById('mcpfusion-root');"
    " return root !== null && root.dataset.rendered === '1'"
)

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
    assert (
        browser.execute_async(
            "const done = arguments[arguments.length - 1];"
            "mcpfusion.render(arguments[0]).then(() => done(null), (e) => done(String(e)));",
            result.to_mcp(),
        )
        is None
    )
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


def test_a_series_the_chart_build_lacks_is_named(browser: Browser, page: str) -> None:
    """A candlestick chart (not in the common build) says so instead of drawing nothing."""
    option = {"xAxis": {}, "yAxis": {}, "series": [{"type": "candlestick", "data": [[1, 2]]}]}
    render(browser, page, response("x").ui(ui.echarts(option)).build().to_mcp())
    failure = browser.execute("return document.querySelector('.mf-failure').textContent")
    assert failure == (
        "This chart could not be drawn: the renderer draws line, bar, pie, scatter series,"
        ' not "candlestick"'
    )


async def over_http() -> tuple[str, dict[str, str], dict[str, Any]]:
    """Over streamable HTTP (2025-11-25) with the official client: the App document, the
    diagram parts it names, and a tool result with a diagram."""
    async with http_server(target=TARGET) as url, Client(url, mode="legacy") as client:
        with anyio.fail_after(120):
            document = await read_text(client, APP_URI)
            [named] = re.findall(r'name="mcpfusion-diagram-parts" content="([^"]*)"', document)
            reads = {uri: await read_text(client, uri) for uri in json.loads(html.unescape(named))}
            result = await client.call_tool("flow", {"action": "show"})
    return document, reads, result.model_dump(mode="json", by_alias=True, exclude_none=True)


@pytest.fixture(scope="module")
def served() -> tuple[str, dict[str, str], dict[str, Any]]:
    """What the host read from the server, once."""
    return anyio.run(over_http)


def framed(browser: Browser, tmp_path: Path, served: Any, reads: Any) -> None:
    """Loads the host page around the App document and waits until the result rendered."""
    document, _, result = served
    page = tmp_path / "host.html"
    values = {"RESULT": inline(result), "READS": inline(reads), "DOCUMENT": inline(document)}
    # One pass over the page: the values themselves may hold the placeholders' words.
    filled = re.sub(r"\b(RESULT|READS|DOCUMENT)\b", lambda m: values[m.group(1)], HOST)
    page.write_text(filled, encoding="utf-8")
    browser.get(page.as_uri())
    browser.frame(browser.find("#app"))
    browser.wait_until(RENDERED)


def test_the_app_reads_the_diagram_library_through_its_host(
    browser: Browser, served: Any, tmp_path: Path, artifacts: Path
) -> None:
    """A result with a diagram: the App reads the parts via the host, runs them, draws."""
    _, reads, _ = served
    framed(browser, tmp_path, served, reads)
    assert browser.execute("return document.querySelector('.mf-mermaid svg') !== null")
    assert browser.execute("return document.querySelector('.mf-failure')") is None
    browser.screenshot(artifacts / "ui-app-diagram.png")
    browser.frame(None)
    log = browser.execute("return window.hostLog")
    assert log.count("resources/read") == len(reads)


def test_without_a_host_that_reads_the_diagram_shows_its_source(
    browser: Browser, served: Any, tmp_path: Path
) -> None:
    """A host that forwards no resources/read: the diagram's card says so, with its text."""
    framed(browser, tmp_path, served, None)
    failure = browser.execute("return document.querySelector('.mf-failure').textContent")
    assert failure.startswith("This diagram could not be drawn: Method not found")
    source = browser.execute("return document.querySelector('.mf-failure + pre').textContent")
    assert source == "graph LR\n  placed --> paid"
