"""Hypothesis strategies for hostile text, JSON values and UI blocks, with their expected parse."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from mcpfusion import UIBlock, ui
from mcpfusion._wire.format import RESERVED_TAGS, fold_lines, neutralize

WIDTHS = ("full", "half", "third")


def _any_case(name: str) -> st.SearchStrategy[str]:
    flips = st.lists(st.booleans(), min_size=len(name), max_size=len(name))
    return flips.map(
        lambda f: "".join(c.upper() if up else c for c, up in zip(name, f, strict=True))
    )


# Spellings a Unicode-aware reader folds to the ASCII name (SPEC §7): long s, dotless i,
# full-width letters.
_FOLDING = [
    lambda name: name,
    lambda name: name.replace("s", "\u017f"),
    lambda name: name.replace("i", "\u0131"),
    lambda name: "".join(chr(ord(c) + 0xFEE0) for c in name),
]

reserved_tag_text = st.builds(
    lambda slash, spell, name, tail: f"<{slash}{spell(name)}{tail}",
    st.sampled_from(["", "/", " ", "/ ", " / ", "\t/\n", "\u3000"]),
    st.sampled_from(_FOLDING),
    st.sampled_from(RESERVED_TAGS).flatmap(_any_case),
    st.sampled_from(["", ">", " ", "\n", "\t", "/>", ' code="X" severity="error">', "X"]),
)
"""A reserved tag, opening or closing, in any case and Unicode spelling SPEC §7 folds,
whitespace around the "/", with assorted continuations."""

_PIECES = [
    '"', "'", "&", "&amp;", "&lt;", "&#60;", "&quot;", "<", ">", "</", "< ", "- ", ": ", "|",
    "\\|", "\\", "\r", "\n", "\r\n", "\n\n", "\x0b", "\x0c", "\x85", "\u2028", " ", "\t", "é",
    "📊", "<b>", "OK", "null", "{", "[", "=== ", "\x00", "<!--", "<![CDATA[", "<?",
]  # fmt: skip

hostile_text = st.lists(
    st.one_of(
        reserved_tag_text,
        st.sampled_from(_PIECES),
        # Backtick runs, often at the start of a line where they could close a fence.
        st.builds(
            lambda lead, n: lead + "`" * n,
            st.sampled_from(["", "\n", "\r", "\r\n", "\n   "]),
            st.integers(1, 7),
        ),
        st.text(max_size=6),
    ),
    max_size=8,
).map("".join)
"""Text mixing reserved tags, quotes, ampersands, backtick runs, CR/LF and arbitrary characters."""

single_line = hostile_text.map(lambda s: fold_lines(s).replace("`", "")).filter(bool)
"""Non-empty hostile text without line breaks or backticks (UI types, fence languages)."""

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | hostile_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_text, inner, max_size=4),
    max_leaves=12,
)
"""JSON-like values, NaN and infinities included, with hostile strings as keys and values."""

tool_names = st.from_regex(r"[A-Za-z0-9_.\-/]{1,24}", fullmatch=True)


def as_json(value: Any) -> Any:
    """What ``json.loads`` gives back for ``value``: NaN and infinities become ``None``."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [as_json(item) for item in value]
    if isinstance(value, dict):
        return {key: as_json(item) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class ExpectedUI:
    """What the parser must read back from one UI block; ``None`` fields are not checked."""

    type: str
    title: str
    width: str | None
    priority: int | None
    content: str | None = None
    lang: str | None = None
    body: str | None = None
    json_body: Any = None
    is_json: bool = False


def _cell(value: Any) -> str:
    return "" if value is None else fold_lines(str(value)).replace("|", "\\|")


def _table(headers: list[Any], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |"]
    lines.append("| " + " | ".join("---" for _ in headers) + " |")
    lines.extend("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows)
    return "\n".join(lines)


cells = st.none() | st.integers() | hostile_text


@st.composite
def ui_blocks(draw: st.DrawFn) -> tuple[UIBlock, ExpectedUI]:
    """One UI block made by a random helper, and what parsing it must give back."""
    title = draw(st.just("") | hostile_text)
    width = draw(st.none() | st.sampled_from(WIDTHS))
    priority = draw(st.none() | st.integers())
    meta: dict[str, Any] = {"title": title, "width": width, "priority": priority}
    kind = draw(
        st.sampled_from(
            ["markdown", "mermaid", "code", "json", "echarts", "table", "list", "summary", "raw"]
        )
    )
    type_ = kind
    expected: dict[str, Any] = {}
    if kind in ("markdown", "summary"):
        text = draw(hostile_text)
        block = ui.markdown(text, **meta) if kind == "markdown" else ui.summary(text, **meta)
        prefix = "📊 **Summary**: " if kind == "summary" else ""
        expected["content"] = neutralize(prefix + text)
    elif kind in ("mermaid", "code"):
        text = draw(hostile_text)
        lang = draw(single_line) if kind == "code" else "mermaid"
        block = ui.code_block(lang, text, **meta) if kind == "code" else ui.mermaid(text, **meta)
        type_ = lang
        # Neutralized as one text (SPEC §7): a "</" ending the language line may be closed
        # by a ">" in the body, so each part is read from the whole fence.
        first, rest = neutralize(block.content).split("\n", 1)
        expected.update(lang=first.lstrip("`"), body=rest.rsplit("\n", 1)[0])
    elif kind in ("json", "echarts"):
        value = draw(json_values)
        block = ui.json(value, **meta) if kind == "json" else ui.echarts(value, **meta)
        expected.update(lang=kind, json_body=as_json(value), is_json=True)
    elif kind == "table":
        headers = draw(st.lists(cells, min_size=1, max_size=3))
        rows = draw(st.lists(st.lists(cells, min_size=len(headers), max_size=len(headers))))
        block = ui.table(headers, rows, **meta)
        type_ = "markdown"
        expected["content"] = neutralize(_table(headers, rows))
    elif kind == "list":
        items = draw(st.lists(cells, max_size=4))
        block = ui.list(items, **meta)
        type_ = "markdown"
        expected["content"] = neutralize("\n".join(f"- {_item(i)}" for i in items))
    else:
        type_ = draw(single_line)
        text = draw(hostile_text)
        block = UIBlock(type_, text, **meta)
        expected["content"] = neutralize(text)
    return block, ExpectedUI(type_, title, width, priority, **expected)


def _item(value: Any) -> str:
    return fold_lines(str(value))


def expected_entries(texts: list[str | None]) -> list[str]:
    """Bullet lines per SPEC §8: folded, neutralized, empties and later duplicates dropped."""
    lines: list[str] = []
    for text in texts:
        if not text:
            continue
        line = neutralize(fold_lines(text))
        if line.strip() and line not in lines:
            lines.append(line)
    return lines
