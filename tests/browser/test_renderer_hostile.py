"""The renderer alone in Chromium, on results whose content tries to run script."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpfusion._renderer import renderer_document
from tests.browser import hostile
from tests.browser.webdriver import ELEMENT, Browser

pytestmark = pytest.mark.slow

WATCH = """
window.__executed = [];
window.__violations = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__violations.push(e.violatedDirective + " " + (e.sample || e.blockedURI)));
"""
RENDER = """
const done = arguments[arguments.length - 1];
mcpfusion.render(arguments[0]).then(() => done(null), (e) => done(String(e)));
"""
HANDLERS = """
return [...document.querySelectorAll("#mcpfusion-root *")].flatMap((node) =>
  [...node.attributes]
    .filter((a) => a.name.startsWith("on"))
    .map((a) => node.tagName + " " + a.name));
"""
SETTLE = "const done = arguments[arguments.length - 1]; setTimeout(() => done(null), 300);"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The renderer document as a file:// URL."""
    path: Path = tmp_path_factory.mktemp("renderer") / "renderer.html"
    path.write_text(renderer_document(), encoding="utf-8")
    return path.as_uri()


def render(browser: Browser, page: str, result: dict[str, Any]) -> None:
    """Loads the renderer, starts recording executions and CSP violations, renders ``result``."""
    browser.get(page)
    browser.execute(WATCH)
    assert browser.execute_async(RENDER, result) is None


def nothing_ran(browser: Browser, *, parsed_handlers: bool = False) -> None:
    """No payload ran, no inline handler is in the page, and the CSP had nothing to block.

    Args:
        parsed_handlers: allow ``script-src-attr`` reports. Chromium reports an inline
            handler that DOMParser merely parses (as a sanitizer does), in a document that
            can never run it; the page's own handlers are checked separately.
    """
    browser.execute_async(SETTLE)  # lets any late handler (an image error) fire
    assert browser.execute("return window.__executed") == []
    assert browser.execute(HANDLERS) == []
    violations = browser.execute("return window.__violations")
    if parsed_handlers:
        violations = [v for v in violations if not v.startswith("script-src-attr ")]
    assert violations == []


def test_hostile_table_markdown_chart_and_code_run_nothing(
    browser: Browser, page: str, artifacts: Path
) -> None:
    """Payloads in a table cell, markdown, a chart option and code stay inert text."""
    render(browser, page, hostile.hostile_result())
    cells = browser.execute(
        "return [...document.querySelectorAll('.mf-markdown td')].map((td) => td.textContent)"
    )
    assert cells == [hostile.IMG, hostile.SCRIPT]
    markdown = browser.execute("return document.querySelectorAll('.mf-markdown')[1].textContent")
    assert f"Customer {hostile.IMG}" in markdown
    assert hostile.SVG in markdown
    assert (
        browser.execute("return document.querySelector('[data-type=html] code').textContent")
        == hostile.SCRIPT
    )
    link = browser.find("#mcpfusion-root a")
    assert browser.execute("return arguments[0].textContent", {ELEMENT: link}) == hostile.LINK_TEXT
    assert browser.execute("return arguments[0].getAttribute('href')", {ELEMENT: link}) is None
    browser.click(link)
    # The chart's tooltip and label formatters are strings: showing them runs nothing.
    browser.execute(
        "echarts.getInstanceByDom(document.querySelector('.mf-chart'))"
        ".dispatchAction({type: 'showTip', seriesIndex: 0, dataIndex: 0})"
    )
    browser.screenshot(artifacts / "renderer-hostile.png")
    nothing_ran(browser)


def test_hostile_mermaid_label_and_click_run_nothing(browser: Browser, page: str) -> None:
    """A diagram with markup in a label and a click callback draws, and runs nothing."""
    render(browser, page, hostile.hostile_diagram())
    assert browser.wait_until("return document.querySelector('.mf-mermaid svg') !== null")
    browser.execute(
        "document.querySelectorAll('.mf-mermaid svg .node').forEach((n) => n.dispatchEvent("
        "new MouseEvent('click', {bubbles: true})))"
    )
    assert browser.execute("return document.querySelectorAll('.mf-mermaid img').length") == 0
    # mermaid's own sanitizer parses the label's markup, which Chromium reports.
    nothing_ran(browser, parsed_handlers=True)


def test_error_envelope_shows_markup_as_text(browser: Browser, page: str) -> None:
    """An error whose message holds markup shows it as text, envelope and all."""
    result = hostile.hostile_error()
    render(browser, page, result)
    message = browser.execute("return document.querySelector('.mf-error-message').textContent")
    assert message == f"Customer {hostile.IMG} does not exist."
    raw = browser.execute("return document.querySelector('.mf-raw pre').textContent")
    assert raw == result["content"][0]["text"]
    assert browser.execute("return document.querySelectorAll('#mcpfusion-root img').length") == 0
    nothing_ran(browser)
