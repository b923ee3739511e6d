"""UI blocks: the ``UIBlock`` value and the helpers that build them (SPEC §4)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from mcpfusion._present.content import Audio, Image
from mcpfusion._wire.datablock import to_json
from mcpfusion._wire.format import SUMMARY_MARKER, fence, fold_lines
from mcpfusion._wire.parts import UIBlock

__all__ = [
    "UIBlock",
    "audio",
    "code_block",
    "echarts",
    "image",
    "json",
    "list",
    "markdown",
    "mermaid",
    "summary",
    "table",
]


def echarts(
    config: Any, *, title: str = "", width: str | None = None, priority: int | None = None
) -> UIBlock:
    """An ECharts chart: the config as fenced JSON."""
    return UIBlock("echarts", fence("echarts", to_json(config)), title, width, priority)


def mermaid(
    diagram: str, *, title: str = "", width: str | None = None, priority: int | None = None
) -> UIBlock:
    """A Mermaid diagram, fenced."""
    return UIBlock("mermaid", fence("mermaid", diagram), title, width, priority)


def markdown(
    text: str, *, title: str = "", width: str | None = None, priority: int | None = None
) -> UIBlock:
    """Markdown text, sent verbatim (unfenced)."""
    return UIBlock("markdown", text, title, width, priority)


def code_block(
    lang: str,
    code: str,
    *,
    title: str = "",
    width: str | None = None,
    priority: int | None = None,
) -> UIBlock:
    """Source code, fenced; the block type is the language tag."""
    return UIBlock(lang, fence(lang, code), title, width, priority)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    text = value if type(value) is str else str(value)
    if "|" in text:
        text = text.replace("|", "\\|")
    return text if text.isprintable() else fold_lines(text)


def table(
    headers: Sequence[Any],
    rows: Iterable[Sequence[Any]],
    *,
    title: str = "",
    width: str | None = None,
    priority: int | None = None,
) -> UIBlock:
    """A GitHub pipe table as markdown.

    Raises:
        ValueError: if a row does not have one cell per header.
    """
    if not headers:
        raise ValueError("a table needs at least one header")
    columns = len(headers)
    lines = [
        "| " + " | ".join([_cell(h) for h in headers]) + " |",
        "| " + " | ".join(["---"] * columns) + " |",
    ]
    # A list, not a generator, inside join, and cells read directly: a 100k-row table is
    # the costliest callback a Presenter may run (1.05 -> 0.85 us per row, 10k rows).
    for index, row in enumerate(rows):
        if len(row) != columns:
            raise ValueError(
                f"table row {index} has {len(row)} cells; expected {columns} (one per header)"
            )
        lines.append("| " + " | ".join([_cell(c) for c in row]) + " |")
    return UIBlock("markdown", "\n".join(lines), title, width, priority)


def list(
    items: Iterable[Any],
    *,
    title: str = "",
    width: str | None = None,
    priority: int | None = None,
) -> UIBlock:
    """A markdown bullet list, one ``- item`` line per item.

    Raises:
        TypeError: if ``items`` is a single str (it would list its characters).
    """
    if isinstance(items, str):
        raise TypeError("ui.list takes a list of items, not a str")
    text = "\n".join(f"- {fold_lines(str(item))}" for item in items)
    return UIBlock("markdown", text, title, width, priority)


def json(
    value: Any, *, title: str = "", width: str | None = None, priority: int | None = None
) -> UIBlock:
    """A value as fenced JSON."""
    return UIBlock("json", fence("json", to_json(value)), title, width, priority)


def summary(
    text: str, *, title: str = "", width: str | None = None, priority: int | None = None
) -> UIBlock:
    """A one-line summary, prefixed with the summary marker."""
    return UIBlock("summary", SUMMARY_MARKER + text, title, width, priority)


def image(data: bytes, mime_type: str = "image/png") -> Image:
    """An image for the user and the model, sent as image content after the text blocks."""
    return Image(data, mime_type)


def audio(data: bytes, mime_type: str = "audio/wav") -> Audio:
    """A sound, sent as audio content after the text blocks."""
    return Audio(data, mime_type)
