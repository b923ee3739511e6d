"""UI blocks: the ``UIBlock`` value and the helpers that build them (SPEC §4)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mcpfusion.datablock import to_json
from mcpfusion.wire.format import UI_WIDTHS, fence, fold_lines, ui_passthrough

__all__ = [
    "UIBlock",
    "code_block",
    "echarts",
    "json",
    "list",
    "markdown",
    "mermaid",
    "summary",
    "table",
]


@dataclass(frozen=True, slots=True)
class UIBlock:
    """One ``<ui_passthrough>`` block: a type, its content and optional layout metadata.

    Raises:
        ValueError: if ``type`` is empty or not a single line, ``content`` or ``title`` is
            not a str, ``width`` is not full/half/third or ``priority`` is not an int.
    """

    type: str
    content: str
    title: str = ""
    width: str | None = None
    priority: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.type, str) or not self.type or fold_lines(self.type) != self.type:
            raise ValueError(f"a UI block type must be a non-empty single line: {self.type!r}")
        if self.width is not None and self.width not in UI_WIDTHS:
            raise ValueError(f"width must be one of full, half, third; got {self.width!r}")
        if self.priority is not None and (
            isinstance(self.priority, bool) or not isinstance(self.priority, int)
        ):
            raise ValueError(f"priority must be an int; got {self.priority!r}")
        if not isinstance(self.title, str):
            raise ValueError(f"title must be a str; got {self.title!r}")
        if not isinstance(self.content, str):
            raise ValueError(f"content must be a str; got {type(self.content).__name__}")

    @property
    def text(self) -> str:
        """The block as it appears on the wire."""
        return ui_passthrough(
            self.type, self.content, title=self.title, width=self.width, priority=self.priority
        )


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
    return "" if value is None else fold_lines(str(value)).replace("|", "\\|")


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
    lines = [
        "| " + " | ".join(_cell(h) for h in headers) + " |",
        "| " + " | ".join("---" for _ in headers) + " |",
    ]
    for index, row in enumerate(rows):
        if len(row) != len(headers):
            raise ValueError(
                f"table row {index} has {len(row)} cells; expected {len(headers)} (one per header)"
            )
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
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
    return UIBlock("summary", f"📊 **Summary**: {text}", title, width, priority)
