"""UI blocks: the ``UIBlock`` value and the helpers that build them (SPEC §4)."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from typing import Any, Final

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
    rows = rows if isinstance(rows, builtins.list) else builtins.list(rows)
    if rows and set(map(len, rows)) != {columns}:
        index, row = next((i, r) for i, r in enumerate(rows) if len(r) != columns)
        raise ValueError(
            f"table row {index} has {len(row)} cells; expected {columns} (one per header)"
        )
    if len(rows) <= _FEW_ROWS:  # a cell at a time: less than sorting out columns
        lines += ["| " + " | ".join([_cell(cell) for cell in row]) + " |" for row in rows]
    else:
        # A column at a time, in C where its cells need nothing (all text without a pipe
        # or a line break, or all numbers): a 100k-row table is the costliest callback a
        # Presenter may run, and a Python call per cell was most of it.
        # A chunk at a time, so the passes over a chunk find it in the CPU's cache.
        for start in range(0, len(rows), _CHUNK_ROWS):
            chunk = rows[start : start + _CHUNK_ROWS]
            cells = zip(*map(_column, zip(*chunk, strict=True)), strict=True)
            lines.append("| " + " |\n| ".join(map(" | ".join, cells)) + " |")
    return UIBlock("markdown", "\n".join(lines), title, width, priority)


_CHUNK_ROWS: Final = 1024
"""Rows a table writes a column at a time."""

_FEW_ROWS: Final = 8
"""Up to this many rows, a table is written a cell at a time: sorting out its columns costs
more (3 rows: 6.7 -> 4.0 µs). The two ways cost the same at about 12 rows; 8 stays clear of
that point, where a table's kinds of cells decide which way wins."""


def _column(values: tuple[Any, ...]) -> Sequence[str]:
    """The cells of one column, as ``_cell`` writes each."""
    kinds = set(map(type, values))
    if kinds == {str}:
        texts: Sequence[str] = values
    elif kinds <= {int, float}:
        texts = builtins.list(map(str, values))
    else:
        return [_cell(value) for value in values]
    joined = " ".join(texts)
    if "|" in joined or not joined.isprintable():
        return [_cell(text) for text in texts]
    return texts


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
