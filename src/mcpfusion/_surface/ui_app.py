"""The MCP App: the result renderer served as a ``ui://`` resource, and the tools that use it.

MCP Apps (``io.modelcontextprotocol/ui``): a tool's ``_meta.ui.resourceUri`` names a
``ui://`` HTML resource (``text/html;profile=mcp-app``) that a host renders in a sandboxed
frame, handing it the tool's result. The text blocks stay exactly as SPEC says, so a
client without Apps sees no change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from mcpfusion._errors import ToolError
from mcpfusion._present.content import EmbeddedResource
from mcpfusion._present.presenter import Presenter
from mcpfusion._renderer import APP_MIME_TYPE, diagram_parts, renderer_document

DEFAULT_URI: Final = "ui://mcpfusion/result.html"
"""Where an app serves the renderer unless told."""

APP_META: Final[Mapping[str, Any]] = {
    "ui": {
        # The document inlines every script and style and fetches nothing (its own CSP says
        # default-src 'none'): it asks the host for no network or resource domain.
        "csp": {"connectDomains": [], "resourceDomains": []},
        "prefersBorder": True,
    }
}
"""The ``_meta`` of the renderer resource (its listing and its contents)."""

SCRIPT_MIME: Final = "text/javascript"


def parts_template(uri: str) -> str:
    """The URI template of the diagram library's parts, under the App's ``uri``."""
    return uri + "/diagrams/{part}"


def part_uris(uri: str) -> tuple[str, ...]:
    """The URIs of the diagram library's parts, in order (numbered from 1)."""
    return tuple(f"{uri}/diagrams/{n}" for n in range(1, len(diagram_parts()) + 1))


def renderer(uri: str) -> Callable[[], EmbeddedResource]:
    """The handler of the renderer resource: the document itself, sent verbatim.

    An embedded resource, not a str: the HTML is for the host's frame, not the model, so
    it is not written as a text block (which would neutralize its markup).
    """

    def document() -> EmbeddedResource:
        return EmbeddedResource(
            uri, text=renderer_document(part_uris(uri)), mime_type=APP_MIME_TYPE, meta=APP_META
        )

    document.__name__ = "mcpfusion_renderer"
    return document


def diagram_library(uri: str) -> Callable[[int], EmbeddedResource]:
    """The handler of ``parts_template(uri)``: one part of the diagram library, verbatim.

    The App document leaves the library (mermaid, 5.5 MB) out to stay under the 1 MiB an
    SSE client accepts in one event; it reads these parts through its host when a result
    has a diagram.
    """

    def part(part: int) -> EmbeddedResource:
        parts = diagram_parts()
        if not 1 <= part <= len(parts):
            raise ToolError("NOT_FOUND", f"The diagram library has parts 1 to {len(parts)}.")
        return EmbeddedResource(
            f"{uri}/diagrams/{part}", text=parts[part - 1], mime_type=SCRIPT_MIME
        )

    part.__name__ = "mcpfusion_renderer_diagrams"
    return part


def emits_ui(presenter: Presenter | None) -> bool:
    """Whether a Presenter can send UI blocks: UI callbacks, a truncation notice (a limit),
    or an embedded child that can."""
    if presenter is None:
        return False
    return (
        presenter.has_ui_callbacks
        or presenter.limit is not None
        or any(emits_ui(child) for child in presenter.embeds.values())
    )


def point_tools(tools: list[dict[str, Any]], shows_ui: Callable[[str], bool], uri: str) -> None:
    """Sets ``_meta.ui.resourceUri`` on each listed tool ``shows_ui`` names (in place)."""
    for tool in tools:
        if shows_ui(tool["name"]):
            meta = tool.setdefault("_meta", {})
            meta["ui"] = {**meta.get("ui", {}), "resourceUri": uri}
