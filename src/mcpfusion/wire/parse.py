"""The client-side parser: the inverse of ``ResponseBuilder.build()`` for well-formed content."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mcpfusion.wire.format import (
    ACTION_SUGGESTIONS,
    BULLET_TAGS,
    DOMAIN_RULES,
    LLM_DIRECTIVES,
    TOOL_ERROR,
    UI_PASSTHROUGH,
    VALIDATION_ERROR,
)

_UI_OPEN = re.compile(rf'<{UI_PASSTHROUGH}((?: [a-z]+="[^"]*")*)>\n')
_UI_CLOSE = f"\n</{UI_PASSTHROUGH}>"
_ATTR = re.compile(r' ([a-z]+)="([^"]*)"')
_FENCE = re.compile(r"(`{3,})([^`\n]*)\n(.*)\n\1", re.DOTALL)
_ERROR_CODE = re.compile(rf'<{TOOL_ERROR} code="([^"]*)" severity="([^"]*)">')
_ERROR_MESSAGE = re.compile(r"<message>(.*?)</message>", re.DOTALL)
_JSON_START = frozenset('{["-0123456789tfn')


@dataclass(frozen=True, slots=True)
class ParsedUIBlock:
    """A ``<ui_passthrough>`` block read back: attributes, raw content and unfenced body."""

    type: str
    content: str
    title: str = ""
    width: str | None = None
    priority: int | None = None
    lang: str | None = None
    """The fence language when the whole content is one fenced block, else ``None``."""
    body: str = ""
    """The content without its fence (the content itself when it is not fenced)."""


@dataclass(frozen=True, slots=True)
class ParsedError:
    """The code, severity and message of an error envelope."""

    code: str
    severity: str
    message: str


@dataclass(frozen=True, slots=True)
class ParsedResponse:
    """A tool result's blocks, by kind.

    The wire does not mark which ``<ui_passthrough>`` blocks came from child Presenters, so
    ``ui_blocks`` holds the UI and embed blocks in wire order; ``others`` holds any block of
    no known kind.
    """

    data_text: str
    data: Any
    is_json: bool
    ui_blocks: tuple[ParsedUIBlock, ...] = ()
    directives: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    suggestions: tuple[tuple[str, str], ...] = ()
    others: tuple[str, ...] = ()
    error: ParsedError | None = None


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


def parse_ui_block(text: str) -> ParsedUIBlock | None:
    """Reads one ``<ui_passthrough>`` block, or returns ``None`` if ``text`` is not one."""
    opening = _UI_OPEN.match(text)
    if opening is None or not text.endswith(_UI_CLOSE):
        return None
    attrs = {k: html.unescape(v) for k, v in _ATTR.findall(opening.group(1))}
    content = text[opening.end() : len(text) - len(_UI_CLOSE)]
    fenced = _FENCE.fullmatch(content)
    priority = attrs.get("priority")
    return ParsedUIBlock(
        type=attrs.get("type", ""),
        content=content,
        title=attrs.get("title", ""),
        width=attrs.get("width"),
        priority=int(priority) if priority is not None else None,
        lang=fenced.group(2) if fenced else None,
        body=fenced.group(3) if fenced else content,
    )


def _bullets(text: str, tag: str) -> list[str] | None:
    head, tail = f"<{tag}>\n", f"\n</{tag}>"
    if not (text.startswith(head) and text.endswith(tail)):
        return None
    return [line[2:] for line in text[len(head) : len(text) - len(tail)].split("\n")]


def parse_error(text: str) -> ParsedError | None:
    """Reads the code, severity and message of an error envelope, if ``text`` is one."""
    if text.startswith(f"<{VALIDATION_ERROR} "):
        return ParsedError("VALIDATION_ERROR", "error", text)
    match = _ERROR_CODE.match(text)
    if match is None:
        return None
    message = _ERROR_MESSAGE.search(text)
    return ParsedError(
        code=html.unescape(match.group(1)),
        severity=html.unescape(match.group(2)),
        message=html.unescape(message.group(1)) if message else "",
    )


def _decode(text: str) -> tuple[Any, bool]:
    if not text or text[0] not in _JSON_START:
        return None, False
    try:
        return json.loads(text), True
    except ValueError:
        return None, False


def parse(content: Iterable[Any]) -> ParsedResponse:
    """Splits a tool result's content into its parts (SPEC §2).

    Args:
        content: the result's content items: strings, ``{"type": "text", "text": ...}``
            dicts or objects with a ``text`` attribute (such as the MCP client's).
    """
    texts = _texts(content)
    if not texts:
        raise ValueError("a tool result has at least one content block")
    data_text, rest = texts[0], texts[1:]
    data, is_json = _decode(data_text)
    ui: list[ParsedUIBlock] = []
    bullets: dict[str, list[str]] = {}
    others: list[str] = []
    for text in rest:
        block = parse_ui_block(text)
        if block is not None:
            ui.append(block)
            continue
        for tag in BULLET_TAGS:
            entries = _bullets(text, tag)
            if entries is not None:
                bullets[tag] = entries
                break
        else:
            others.append(text)
    suggestions = tuple(
        (tool, reason)
        for tool, _, reason in (e.partition(": ") for e in bullets.get(ACTION_SUGGESTIONS, []))
    )
    return ParsedResponse(
        data_text=data_text,
        data=data,
        is_json=is_json,
        ui_blocks=tuple(ui),
        directives=tuple(bullets.get(LLM_DIRECTIVES, ())),
        rules=tuple(bullets.get(DOMAIN_RULES, ())),
        suggestions=suggestions,
        others=tuple(others),
        error=parse_error(data_text),
    )
