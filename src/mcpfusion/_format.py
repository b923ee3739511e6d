"""The wire format: reserved tags, block templates, escaping, neutralization, fences, bullets."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

from mcpfusion._errors import ErrorEnvelope

UI_PASSTHROUGH: Final = "ui_passthrough"
LLM_DIRECTIVES: Final = "llm_directives"
DOMAIN_RULES: Final = "domain_rules"
ACTION_SUGGESTIONS: Final = "action_suggestions"
TOOL_ERROR: Final = "tool_error"
VALIDATION_ERROR: Final = "validation_error"

RESERVED_TAGS: Final = (
    UI_PASSTHROUGH,
    LLM_DIRECTIVES,
    DOMAIN_RULES,
    ACTION_SUGGESTIONS,
    TOOL_ERROR,
    VALIDATION_ERROR,
)
"""Tag names that only the framework may open or close (SPEC §7)."""

UI_WIDTHS: Final = frozenset({"full", "half", "third"})

SUMMARY_MARKER: Final = "📊 **Summary**: "
"""What a summary UI block's content starts with (SPEC §4.2)."""

TRUNCATION_NOTICE: Final = (
    "⚠️ Dataset truncated. {shown} shown, {hidden} hidden. Use filters to narrow results."
)
"""The summary a Presenter sends when its agent limit cut a list (SPEC §5.3)."""

# A "<" that opens or closes a reserved tag: ASCII case-insensitive, optional "/".
_RESERVED_OPEN = re.compile(
    r"<(?=/?(?:" + "|".join(RESERVED_TAGS) + r"))", re.IGNORECASE | re.ASCII
)
# Every character str.splitlines() breaks on; a run of them folds to one space.
_LINE_BREAKS = re.compile(r"[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]+")
_BACKTICK_RUNS = re.compile(r"`{3,}")
# A lone surrogate (as json.loads returns for "\ud800") cannot be encoded as UTF-8: a block
# holding one would make the transport fail the whole call, so it becomes U+FFFD.
_SURROGATES = re.compile("[\ud800-\udfff]")


def _scrub(text: str) -> str:
    return text if text.isascii() else _SURROGATES.sub("\ufffd", text)


def neutralize(text: str) -> str:
    """Writes every ``<`` that would open or close a reserved tag as ``&lt;``.

    Lone surrogates, which no transport can encode, become U+FFFD.
    """
    text = _scrub(text)
    if "<" not in text:
        return text
    return _RESERVED_OPEN.sub("&lt;", text)


def neutralize_json(text: str) -> str:
    """Writes every reserved-tag ``<`` of a JSON text as the escape ``\\u003c``.

    In JSON a ``<`` can only occur inside a string, so the decoded value is unchanged.
    """
    if "<" not in text:
        return text
    return _RESERVED_OPEN.sub(r"\\u003c", text)


def fold_lines(text: str) -> str:
    """Replaces every run of line breaks with one space."""
    # Every line-break character is unprintable, so printable text (the common case)
    # skips the regex.
    return text if text.isprintable() else _LINE_BREAKS.sub(" ", text)


def escape_attr(value: str) -> str:
    """Escapes a value for an XML attribute (all five special characters)."""
    # Chained replace() is several times faster than str.translate() on short strings.
    return (
        _scrub(value)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def escape_text(value: str) -> str:
    """Escapes XML element text (``&`` and ``<``)."""
    return _scrub(value).replace("&", "&amp;").replace("<", "&lt;")


def fence(lang: str, body: str) -> str:
    """Fences ``body`` with a backtick run longer than any run inside it (CommonMark).

    Raises:
        ValueError: if ``lang`` holds a backtick or a line break.
    """
    if "`" in lang or fold_lines(lang) != lang:
        raise ValueError(f"a fence language cannot hold backticks or line breaks: {lang!r}")
    longest = max((len(run) for run in _BACKTICK_RUNS.findall(body)), default=0)
    ticks = "`" * (longest + 1 if longest >= 3 else 3)
    return f"{ticks}{lang}\n{body}\n{ticks}"


def ui_passthrough(
    type: str,
    content: str,
    *,
    title: str = "",
    width: str | None = None,
    priority: int | None = None,
) -> str:
    """Renders one ``<ui_passthrough>`` block (SPEC §4.1); the content is neutralized."""
    attrs = f' type="{escape_attr(type)}"'
    if title:
        attrs += f' title="{escape_attr(title)}"'
    if width is not None:
        attrs += f' width="{escape_attr(width)}"'
    if priority is not None:
        attrs += f' priority="{priority}"'
    return f"<{UI_PASSTHROUGH}{attrs}>\n{neutralize(content)}\n</{UI_PASSTHROUGH}>"


def bullet_entry(text: str) -> str:
    """Returns ``text`` as it appears in a bullet line: line breaks folded, tags neutralized."""
    return neutralize(fold_lines(text))


def bullet_entries(entries: Iterable[str]) -> list[str]:
    """Renders entries for a bullet block, dropping empty ones and later duplicates."""
    seen: dict[str, None] = {}
    for entry in entries:
        line = bullet_entry(entry)
        if line.strip():
            seen.setdefault(line, None)
    return list(seen)


def bullet_block(tag: str, entries: Sequence[str]) -> str:
    """Renders already-prepared entries (at least one) as a bullet block."""
    return f"<{tag}>\n- " + "\n- ".join(entries) + f"\n</{tag}>"


def suggestion_entry(tool: str, reason: str) -> str:
    """Formats one action suggestion as ``tool: reason``."""
    return f"{tool}: {reason}"


def tool_error(envelope: ErrorEnvelope) -> str:
    """Renders an error envelope as the ``<tool_error>`` block of SPEC §9."""
    lines = [
        f'<{TOOL_ERROR} code="{escape_attr(envelope.code)}" '
        f'severity="{escape_attr(envelope.severity)}">',
        f"<message>{escape_text(envelope.message)}</message>",
    ]
    if envelope.recovery:
        lines.append(f"<recovery>{escape_text(envelope.recovery)}</recovery>")
    if envelope.available_actions:
        lines.append("<available_actions>")
        lines.extend(f"  <action>{escape_text(a)}</action>" for a in envelope.available_actions)
        lines.append("</available_actions>")
    if envelope.details:
        lines.append("<details>")
        lines.extend(
            f'  <detail key="{escape_attr(key)}">{escape_text(str(value))}</detail>'
            for key, value in envelope.details.items()
        )
        lines.append("</details>")
    if envelope.retry_after is not None:
        lines.append(f"<retry_after>{envelope.retry_after} seconds</retry_after>")
    lines.append(f"</{TOOL_ERROR}>")
    return "\n".join(lines)


VALIDATION_RECOVERY: Final = "Fix the fields above and call the tool again."


def validation_error(action: str, fields: Sequence[tuple[str, str]]) -> str:
    """Renders the ``<validation_error>`` envelope of SPEC §9 from ``(path, text)`` pairs."""
    lines = [f'<{VALIDATION_ERROR} action="{escape_attr(action)}">']
    lines.extend(
        f'<field name="{escape_attr(name)}">{escape_text(text)}</field>' for name, text in fields
    )
    lines.append(f"<recovery>{VALIDATION_RECOVERY}</recovery>")
    lines.append(f"</{VALIDATION_ERROR}>")
    return "\n".join(lines)
