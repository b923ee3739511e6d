"""The client-side parser: a tool result's text read back into its parts (SPEC §2).

It is the inverse of rendering for mcpfusion's own results and lenient with any other
server's: foreign input never makes it raise; what it cannot read goes to ``others``.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcpfusion._errors import SEVERITIES, ErrorEnvelope, Severity
from mcpfusion._wire.format import TOOL_ERROR, UI_PASSTHROUGH, UI_WIDTHS, VALIDATION_ERROR
from mcpfusion._wire.parts import BULLET_KINDS, BulletKind, ResponseView, UIBlock

_UI_OPEN = re.compile(rf'<{UI_PASSTHROUGH}((?: [a-z]+="[^"]*")*)>\n')
_UI_CLOSE = f"\n</{UI_PASSTHROUGH}>"
_ATTR = re.compile(r' ([a-z]+)="([^"]*)"')
_ERROR_OPEN = re.compile(rf'<{TOOL_ERROR} code="([^"]*)" severity="([^"]*)">')
_ELEMENT = re.compile(r"<(message|recovery|retry_after)>(.*?)</\1>", re.DOTALL)
_ACTION = re.compile(r"<action>(.*?)</action>", re.DOTALL)
_DETAIL = re.compile(r'<detail key="([^"]*)">(.*?)</detail>', re.DOTALL)
_SECONDS = re.compile(r"(\d{1,9}) seconds")
_JSON_START: Final = frozenset('{["-0123456789tfn')


@dataclass(frozen=True, slots=True)
class ParsedResponse:
    """A tool result read back from its text.

    Attributes:
        view: the parts. ``data`` is the decoded JSON of the data block, its text when it
            is not JSON, or ``None`` for an error envelope; the wire does not mark which
            ``<ui_passthrough>`` blocks came from child Presenters, so embeds stay in
            ``ui_blocks``.
        error: the error envelope, when the data block is one (``VALIDATION_ERROR`` with
            the whole text as message for a ``<validation_error>``).
        others: blocks of no known kind, in order.
        is_json: whether the data block is JSON.
    """

    view: ResponseView
    error: ErrorEnvelope | None = None
    others: tuple[str, ...] = ()
    is_json: bool = False


def _texts(content: Iterable[Any]) -> list[str]:
    texts = []
    for item in content:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, Mapping):
            texts.append(str(item.get("text", "")))
        else:
            texts.append(str(getattr(item, "text", "")))
    return texts


def parse_ui_block(text: str) -> UIBlock | None:
    """Reads one ``<ui_passthrough>`` block, or returns ``None`` if ``text`` is not one."""
    opening = _UI_OPEN.match(text)
    if opening is None or not text.endswith(_UI_CLOSE) or len(text) < opening.end() + 2:
        return None
    attrs = {k: html.unescape(v) for k, v in _ATTR.findall(opening.group(1))}
    width = attrs.get("width")
    try:
        return UIBlock(
            type=attrs.get("type", ""),
            content=text[opening.end() : len(text) - len(_UI_CLOSE)],
            title=attrs.get("title", ""),
            width=width if width in UI_WIDTHS else None,
            priority=_integer(attrs.get("priority")),
        )
    except (TypeError, ValueError):  # no type, or one spread over lines
        return None


def _integer(text: str | None) -> int | None:
    if text is None or not text.lstrip("-").isdigit():
        return None
    try:
        return int(text)
    except ValueError:  # past Python's digit limit
        return None


def _bullets(text: str, kind: BulletKind) -> tuple[list[str], str] | None:
    """The bullet lines of a block of ``kind`` and its attribute's value ("" without)."""
    tag, value = kind.tag, ""
    head, tail = f"<{tag}>\n", f"\n</{tag}>"
    if kind.attribute is not None and not text.startswith(head):
        opening = re.match(rf'<{tag} {kind.attribute}="([^"]*)">\n', text)
        if opening is None:
            return None
        head, value = opening.group(0), html.unescape(opening.group(1))
    if not (text.startswith(head) and text.endswith(tail)) or len(text) < len(head + tail):
        return None
    return [line[2:] for line in text[len(head) : len(text) - len(tail)].split("\n")], value


def _bullet_block(text: str) -> tuple[BulletKind, tuple[Any, ...], str] | None:
    """The kind, entries and attribute value of a bullet block, or ``None`` if ``text`` is
    not a valid one."""
    for kind in BULLET_KINDS:
        found = _bullets(text, kind)
        if found is not None:
            lines, value = found
            try:
                return kind, tuple(map(kind.read, lines)), value
            except ValueError:  # a foreign server's suggestion naming no valid tool
                return None
    return None


def parse_error(text: str) -> ErrorEnvelope | None:
    """Reads an error envelope (SPEC §9), if ``text`` is one."""
    if text.startswith(f"<{VALIDATION_ERROR} "):
        return ErrorEnvelope("VALIDATION_ERROR", text)
    opening = _ERROR_OPEN.match(text)
    if opening is None:
        return None
    elements = {name: html.unescape(value) for name, value in _ELEMENT.findall(text)}
    severity = html.unescape(opening.group(2))
    seconds = _SECONDS.fullmatch(elements.get("retry_after", ""))
    try:
        return ErrorEnvelope(
            html.unescape(opening.group(1)),
            elements.get("message", ""),
            severity=severity if severity in SEVERITIES else _ERROR,
            recovery=elements.get("recovery"),
            available_actions=[html.unescape(a) for a in _ACTION.findall(text)],
            details={html.unescape(k): html.unescape(v) for k, v in _DETAIL.findall(text)} or None,
            retry_after=int(seconds.group(1)) if seconds else None,
        )
    except ValueError:  # an empty code
        return None


_ERROR: Final[Severity] = "error"


def _decode(text: str) -> tuple[Any, bool]:
    if not text or text[0] not in _JSON_START:
        return text, False
    try:
        return json.loads(text), True
    except (ValueError, RecursionError):
        return text, False


def parse(content: Iterable[Any]) -> ParsedResponse:
    """Splits a tool result's content into its parts (SPEC §2).

    Never raises on a foreign result: an empty content list (MCP allows one, say beside
    ``structuredContent``) reads as no data and no blocks.

    Args:
        content: the result's content items: strings, ``{"type": "text", "text": ...}``
            dicts or objects with a ``text`` attribute (such as the MCP client's).
    """
    texts = _texts(content)
    if not texts:
        return ParsedResponse(ResponseView())
    data_text, rest = texts[0], texts[1:]
    error = parse_error(data_text)
    data, is_json = (None, False) if error is not None else _decode(data_text)
    ui: list[UIBlock] = []
    bullets: dict[str, Any] = {}
    others: list[str] = []
    for text in rest:
        block = parse_ui_block(text)
        bullet = None if block is not None else _bullet_block(text)
        if block is not None:
            ui.append(block)
        elif bullet is not None:
            kind, entries, value = bullet
            bullets[kind.field] = entries
            if kind.attribute is not None:
                bullets[kind.attribute] = value
        else:
            others.append(text)
    view = ResponseView(data, tuple(ui), (), **bullets)
    return ParsedResponse(view, error, tuple(others), is_json)
