"""The MCP App: the renderer as a ui:// resource and the tools that point at it."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client
from mcp.server import apps
from pydantic import BaseModel

from mcpfusion import DefinitionError, Fusion, Presenter, ui
from mcpfusion._renderer import APP_MIME_TYPE, diagram_parts, renderer_document
from mcpfusion._surface.outcome import SurfaceError
from mcpfusion._surface.ui_app import emits_ui, part_uris
from mcpfusion.server import build_server
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio


class Row(BaseModel):
    """What a reader may see of a row."""

    id: int


def presenters() -> dict[str, Presenter]:
    """Presenters that can and cannot send UI blocks."""
    charted = Presenter("Charted", Row)
    charted.ui(lambda row: ui.summary("s"))
    listed = Presenter("Listed", Row)
    listed.collection_ui(lambda rows: ui.summary("s"))
    parent = Presenter("Parent", Row).embed("child", charted)
    return {
        "charted": charted,
        "listed": listed,
        "limited": Presenter("Limited", Row, limit=5),
        "parent": parent,
        "plain": Presenter("Plain", Row),
    }


def test_which_presenters_can_send_ui() -> None:
    """UI callbacks, a limit (the truncation notice) or a child that can; not a bare one."""
    found = {name: emits_ui(p) for name, p in presenters().items()}
    assert found == {
        "charted": True,
        "listed": True,
        "limited": True,
        "parent": True,
        "plain": False,
    }
    assert emits_ui(None) is False


def make_app() -> Fusion:
    """Grouped, flat and plain tools, and the App enabled."""
    views = presenters()
    app = Fusion("app")
    grouped = app.tool("grouped")
    grouped.action("a", returns=views["plain"])(lambda: {"id": 1})
    grouped.action("b", returns=views["charted"])(lambda: {"id": 1})
    flat = app.tool("flat", exposition="flat")
    flat.action("ui", returns=views["limited"])(lambda: [])
    flat.action("text", returns=views["plain"])(lambda: {"id": 1})
    app.tool("plain").action("a")(lambda: "x")
    app.enable_ui_app()
    return app


def test_tools_with_ui_point_at_the_app_and_only_they() -> None:
    """A grouped tool with one UI action, a flat tool's UI action; the rest unchanged."""
    tools = {t["name"]: t for t in make_app().list_tools()}
    pointed = {name for name, t in tools.items() if "_meta" in t}
    assert pointed == {"grouped", "flat_ui"}
    assert tools["grouped"]["_meta"] == {"ui": {"resourceUri": "ui://mcpfusion/result.html"}}


async def test_the_resource_is_the_document_with_the_apps_type_and_csp() -> None:
    """Read verbatim (not neutralized), typed text/html;profile=mcp-app, _meta.ui.csp."""
    app = make_app()
    [listed] = FusionTester(app).list_resources()
    assert listed["mimeType"] == APP_MIME_TYPE == apps.APP_MIME_TYPE
    assert listed["_meta"]["ui"]["csp"] == {"connectDomains": [], "resourceDomains": []}
    read = await FusionTester(app).read_resource("ui://mcpfusion/result.html")
    [content] = read.contents
    assert content["text"] == renderer_document(part_uris("ui://mcpfusion/result.html"))
    assert len(content["text"].encode()) < 1024 * 1024
    assert content["mimeType"] == APP_MIME_TYPE and content["_meta"] == listed["_meta"]
    assert read.cache_scope == "public"


async def test_the_server_advertises_mcp_apps() -> None:
    """2026-07-28 capabilities carry io.modelcontextprotocol/ui (2025-11-25 has no
    extensions field); in both eras the tools point at the App."""
    for mode, extensions in (("auto", {apps.EXTENSION_ID: {}}), ("legacy", None)):
        with anyio.fail_after(10):
            async with Client(build_server(make_app()), mode=mode) as client:
                caps = client.server_capabilities
                assert caps is not None and caps.extensions == extensions
                tools = (await client.list_tools()).tools
                assert {t.name for t in tools if t.meta} == {"grouped", "flat_ui"}
    plain = Fusion("plain")
    plain.tool("t").action("a")(lambda: 1)
    async with Client(build_server(plain)) as client:
        caps = client.server_capabilities
        assert caps is not None and not caps.extensions


def test_mistakes_fail_at_definition() -> None:
    """A URI that is not ui://, a second App, an App on a frozen app."""
    app = Fusion("app")
    with pytest.raises(DefinitionError, match="starts with ui://"):
        app.enable_ui_app("http://x")
    app.enable_ui_app("ui://mine/app.html")
    with pytest.raises(DefinitionError, match=r"already serves its UI at ui://mine/app\.html"):
        app.enable_ui_app()
    frozen = Fusion("frozen")
    frozen.freeze()
    with pytest.raises(DefinitionError, match="is frozen"):
        frozen.enable_ui_app()


async def test_the_diagram_library_is_served_in_parts_beside_the_app() -> None:
    """One template under the App's URI; its parts, read verbatim, join into the library."""
    app = Fusion("app")
    app.enable_ui_app("ui://mine/app.html")
    [template] = FusionTester(app).list_resource_templates()
    assert template["uriTemplate"] == "ui://mine/app.html/diagrams/{part}"
    assert template["mimeType"] == "text/javascript"
    texts = []
    for uri in part_uris("ui://mine/app.html"):
        [content] = (await FusionTester(app).read_resource(uri)).contents
        assert (content["uri"], content["mimeType"]) == (uri, "text/javascript")
        texts.append(content["text"])
    assert tuple(texts) == diagram_parts()


async def test_a_part_out_of_range_is_not_found() -> None:
    """Part 0, a part past the last, a part that is no number: a clear error, no text."""
    app = Fusion("app")
    app.enable_ui_app()
    count = len(diagram_parts())
    for part, message in (
        ("0", f"has parts 1 to {count}"),
        (str(count + 1), "has parts"),
        ("x", "Invalid"),
    ):
        with pytest.raises(SurfaceError, match=message):
            await FusionTester(app).read_resource(f"ui://mcpfusion/result.html/diagrams/{part}")
