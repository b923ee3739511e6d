"""The dev console in Chromium: forms, both sides of a result, progress, errors, reloading."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
import toon_format

from examples.billing.server import create_app
from mcpfusion import ToolResponse
from mcpfusion.terminal import TokenCounter, classify, definition_json
from tests.browser.conftest import console
from tests.browser.sample_app import app as sample
from tests.browser.webdriver import ELEMENT, Browser

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
SAMPLE = HERE / "sample_app.py"

READY = (
    "return document.body.dataset.rendererReady === 'true'"
    " && document.querySelector(arguments[0]) !== null"
)
BLOCKS = """
return [...document.querySelectorAll('#blocks article')].map((a) =>
  [a.dataset.kind, a.querySelector('header').textContent, Number(a.dataset.tokens),
   a.querySelector('pre').textContent]);
"""
INKED = """
const canvas = document.querySelector(arguments[0] + ' canvas');
const {data} = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
let inked = 0;
for (let i = 0; i < data.length; i += 4) {
  if (data[i + 3] > 0 && (data[i] < 230 || data[i + 1] < 230 || data[i + 2] < 230)) inked += 1;
}
return inked;
"""
ROW_IDS = (
    "return [...document.querySelector('[data-type=markdown] table').tBodies[0].rows]"
    ".map((r) => r.cells[0].textContent)"
)


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    """The CLI's token counter."""
    return TokenCounter()


def call(browser: Browser, tool: str, action: str, calls: int, **values: str) -> None:
    """Fills the action's form, presses Call, and waits for call number ``calls`` to show."""
    form = browser.find(f'form[data-tool="{tool}"][data-action="{action}"]')
    if not browser.execute("return arguments[0].querySelector('details').open", {ELEMENT: form}):
        browser.click(browser.find("summary", within=form))
    for name, value in values.items():
        browser.type(browser.find(f'[data-field="{name}"] input', within=form), value)
    browser.click(browser.find("button.call", within=form))
    browser.wait_until("return document.body.dataset.calls === arguments[0]", str(calls))


def shown_blocks(browser: Browser) -> list[list[Any]]:
    """The model pane: kind, label line, token count and text of each block."""
    blocks: list[list[Any]] = browser.execute(BLOCKS)
    return blocks


def expected_blocks(response: ToolResponse, counter: TokenCounter) -> list[list[Any]]:
    """What `mcpfusion call` shows for the same result: kind, label, tokens, text."""
    return [
        [kind, f"{label} · {counter.count(text)} tokens", counter.count(text), text]
        for kind, label, text in classify(response)
    ]


_CURSOR = re.compile(r'_cursor "([^"]+)"')


def with_cursors_of(
    shown: list[list[Any]], expected: list[list[Any]], counter: TokenCounter
) -> list[list[Any]]:
    """``expected`` with the page cursors ``shown`` carries, its counts made again: a
    cursor is sealed afresh on every call, so two calls never send the same one."""
    fresh = iter(_CURSOR.findall("".join(str(block[3]) for block in shown)))
    made = []
    for kind, label, _, text in expected:
        text = _CURSOR.sub(lambda found: f'_cursor "{next(fresh, found[1])}"', text)
        tokens = counter.count(text)
        made.append([kind, f"{label.rsplit(' · ', 1)[0]} · {tokens} tokens", tokens, text])
    return made


def in_renderer(browser: Browser, renders: int) -> None:
    """Switches into the renderer's frame once it has drawn ``renders`` results."""
    browser.frame(None)
    browser.frame(browser.find("#renderer"))
    browser.wait_until(
        "return document.getElementById('mcpfusion-root').dataset.rendered === arguments[0]",
        str(renders),
    )


def test_invoice_list_shows_table_chart_and_the_cli_token_counts(
    browser: Browser, tmp_path: Path, artifacts: Path, counter: TokenCounter
) -> None:
    """billing.list_invoices through its form: 50 ids in the table, a drawn chart, CLI counts."""
    db = tmp_path / "billing.db"
    billing = create_app(db)

    async def list_invoices() -> ToolResponse:
        async with billing.running():
            return await billing.call_tool(
                "billing", {"action": "list_invoices"}, identity=billing.local_identity
            )

    expected = anyio.run(list_invoices)
    ids = [row["id"] for row in toon_format.decode(expected.blocks[0])]  # the app's default
    assert len(ids) == 50
    with console("examples.billing.__main__:app", env={"MCPFUSION_BILLING_DB": str(db)}) as url:
        browser.get(url)
        browser.wait_until(READY, 'form[data-action="list_invoices"]')
        tool_tokens = browser.execute(
            "return [...document.querySelectorAll('section.tool')]"
            ".map((s) => [s.dataset.tool, Number(s.dataset.tokens)])"
        )
        assert tool_tokens == [
            [t["name"], counter.count(definition_json(t))] for t in billing.list_tools()
        ]
        call(browser, "billing", "list_invoices", 1)
        shown = shown_blocks(browser)
        assert shown == with_cursors_of(shown, expected_blocks(expected, counter), counter)
        in_renderer(browser, 1)
        assert browser.execute(ROW_IDS) == ids
        assert browser.execute(INKED, ".mf-chart") > 500
        browser.frame(None)
        browser.screenshot(artifacts / "console-billing.png")


def test_orders_show_diagram_progress_and_an_error_as_the_agent_reads_it(
    browser: Browser, artifacts: Path, counter: TokenCounter
) -> None:
    """A table, chart and SVG diagram with a progress bar; then a tool error on both sides."""
    expected = anyio.run(sample.call_tool, "orders", {"action": "list_orders"})
    failure = anyio.run(sample.call_tool, "orders", {"action": "cancel_order", "order_id": "ORD-9"})
    with console(f"{SAMPLE}:app") as url:
        browser.get(url)
        browser.wait_until(READY, 'form[data-action="list_orders"]')
        call(browser, "orders", "list_orders", 1)
        assert browser.execute("return document.body.dataset.progressEvents") == "3"
        assert shown_blocks(browser) == expected_blocks(expected, counter)
        in_renderer(browser, 1)
        assert len(browser.execute(ROW_IDS)) == 50
        assert browser.execute("return document.querySelector('.mf-mermaid svg g') !== null")
        assert browser.execute(INKED, ".mf-chart") > 500
        browser.frame(None)
        browser.screenshot(artifacts / "console-orders.png")

        call(browser, "orders", "cancel_order", 2, order_id="ORD-9")
        assert shown_blocks(browser) == expected_blocks(failure, counter)
        in_renderer(browser, 2)
        error = browser.execute(
            "const box = document.querySelector('.mf-error');"
            "return [box.dataset.code, box.querySelector('.mf-raw pre').textContent]"
        )
        assert error == ["NOT_FOUND", failure.blocks[0]]
        browser.frame(None)
        browser.screenshot(artifacts / "console-error.png")


def test_console_reloads_the_app_when_its_file_changes(browser: Browser, tmp_path: Path) -> None:
    """Saving the app's file shows the new tool list without restarting the console."""
    source = tmp_path / "reloaded_app.py"
    shutil.copyfile(SAMPLE, source)
    with console(f"{source}:app", "--poll", "0.1") as url:
        browser.get(url)
        browser.wait_until(READY, 'section.tool[data-tool="orders"]')
        source.write_text(source.read_text().replace('app.tool("orders"', 'app.tool("purchases"'))
        stat = source.stat()  # a later mtime, even where the clock is coarse
        os.utime(source, (stat.st_atime, stat.st_mtime + 5))
        browser.wait_until("return document.querySelector('section.tool[data-tool=purchases]')")
        assert browser.execute("return document.body.dataset.toolsVersion") == "2"
        assert browser.execute("return document.getElementById('banner').hidden")
