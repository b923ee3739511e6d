"""The MCP App in Chromium: the ui:// resource read through the SDK, framed by a host page
that speaks the Apps protocol and hands it a real tool result, renders the blocks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, types

from examples.billing.server import create_app
from mcpfusion.server import build_server
from tests.browser.test_console import INKED, ROW_IDS
from tests.browser.webdriver import Browser

pytestmark = pytest.mark.slow

# The host's half of MCP Apps (SEP-1865): answer ui/initialize, then, once the view says
# it is initialized, deliver the tool result as ui/notifications/tool-result.
HOST = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>host</title></head>
<body><iframe id="app" sandbox="allow-scripts" style="width:1400px;height:1100px"></iframe>
<script>
const frame = document.getElementById("app");
const result = RESULT;
window.hostLog = [];
window.addEventListener("message", (event) => {
  if (event.source !== frame.contentWindow) return;
  const message = event.data;
  window.hostLog.push(message.method || "response");
  if (message.method === "ui/initialize") {
    frame.contentWindow.postMessage({jsonrpc: "2.0", id: message.id, result: {
      protocolVersion: message.params.protocolVersion,
      hostInfo: {name: "test-host", version: "1.0.0"},
      hostCapabilities: {}, hostContext: {theme: "light"}}}, "*");
  } else if (message.method === "ui/notifications/initialized") {
    frame.contentWindow.postMessage({jsonrpc: "2.0",
      method: "ui/notifications/tool-result", params: result}, "*");
  }
});
frame.srcdoc = DOCUMENT;
</script></body></html>
"""


async def served(db: Path) -> tuple[list[dict[str, Any]], Any, dict[str, Any]]:
    """Through the SDK client: the tool list, the ui:// read, a list_invoices result.

    In memory there is no HTTP request under a call: the caller is the app's local
    identity, the billing example's local operator.
    """
    app = create_app(db)
    with anyio.fail_after(60):
        async with app.running(), Client(build_server(app)) as client:
            return await _exchange(client)


async def _exchange(client: Client) -> tuple[list[dict[str, Any]], Any, dict[str, Any]]:
    listed = (await client.list_tools()).tools
    tools = [t.model_dump(by_alias=True, exclude_none=True) for t in listed]
    uri = tools[0]["_meta"]["ui"]["resourceUri"]
    read = await client.read_resource(uri)
    result = await client.call_tool("billing", {"action": "list_invoices"})
    return tools, read, result.model_dump(mode="json", by_alias=True, exclude_none=True)


def inline(value: Any) -> str:
    """``value`` as a JavaScript literal inside the host's script: its ``</`` (the
    document's own closing script tags) escaped, so the host's script element goes on."""
    return json.dumps(value).replace("</", "<\\/")


@pytest.fixture(scope="module")
def billing(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, ...]:
    """The billing example's tools, App document and one tool result, read once."""
    return anyio.run(served, tmp_path_factory.mktemp("ui-app") / "billing.db")


def test_the_document_is_served_with_the_apps_type_and_metadata(billing: tuple[Any, ...]) -> None:
    """resources/read of the ui:// URI: the HTML, text/html;profile=mcp-app, _meta.ui.csp."""
    tools, read, _ = billing
    [content] = read.contents
    assert isinstance(content, types.TextResourceContents)
    assert content.mime_type == "text/html;profile=mcp-app"
    assert content.text.startswith("<!DOCTYPE html>")
    assert content.meta is not None and "csp" in content.meta["ui"]
    pointed = {t["name"] for t in tools if "ui" in t.get("_meta", {})}
    assert pointed == {"billing"}


def test_a_host_frame_renders_a_tool_result(
    browser: Browser, billing: tuple[Any, ...], tmp_path: Path, artifacts: Path
) -> None:
    """Framed by a host that delivers list_invoices: the 50 ids in a table, a drawn chart."""
    _, read, result = billing
    page = tmp_path / "host.html"
    html = HOST.replace("RESULT", inline(result)).replace("DOCUMENT", inline(read.contents[0].text))
    page.write_text(html, encoding="utf-8")
    browser.get(page.as_uri())
    browser.frame(browser.find("#app"))
    # Until the frame has loaded its srcdoc, it holds an empty document.
    browser.wait_until(
        "const root = document.getElementById('mcpfusion-root');"
        " return root !== null && root.dataset.rendered === '1'"
    )
    ids = browser.execute(ROW_IDS)
    assert len(ids) == 50 and ids[0].startswith("INV-")
    chart = "[data-type=echarts]"
    browser.wait_until(INKED.replace("return inked;", "return inked > 500;"), chart)
    browser.screenshot(artifacts / "ui-app-invoices.png")
    browser.frame(None)
    log = browser.execute("return window.hostLog")
    assert log[0] == "ui/initialize" and "ui/notifications/initialized" in log
