"""Tool descriptions: the action list of a grouped tool, as text or as TOON (SPEC §10)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from mcpfusion._present.statesync import freshness
from mcpfusion._tools.action import Action
from mcpfusion._tools.schema import sentence
from mcpfusion._wire.datablock import to_toon
from mcpfusion._wire.format import fold_lines

DESTRUCTIVE: Final = "[DESTRUCTIVE] "
"""Prefixed to a destructive action's description, in both forms."""


Groups = Mapping[str, tuple[str, str]]
"""Each grouped action's group: action name -> (group name, group description)."""


def describe_grouped(
    summary: str, actions: Sequence[Action], groups: Groups | None = None, instructions: str = ""
) -> str:
    """The description line, a blank line, then one bullet per action::

    Invoices and payments.

    Actions:
    - get_invoice: Fetch one invoice. Requires: invoice_id.
    - void_invoice: [DESTRUCTIVE] Void an invoice. Requires: invoice_id.

    The actions of a group follow under their own heading (``admin actions: ...``), and
    the tool's instructions close the description after a blank line.
    """
    groups = groups or {}
    lines = [summary, ""]
    loose = [a for a in actions if a.name not in groups]
    if loose or not actions:
        lines.append("Actions:")
        lines.extend(map(_bullet, loose))
    for name, description, members in _grouped(actions, groups):
        if len(lines) > 2:
            lines.append("")
        lines.append(f"{name} actions: {description}".rstrip())
        lines.extend(map(_bullet, members))
    return _closed("\n".join(lines), instructions)


def _bullet(action: Action) -> str:
    parts = [DESTRUCTIVE.strip()] if action.destructive else []
    text = _text(action)
    if text:
        parts.append(sentence(text))
    marker = freshness(action.stale, action.fresh_for)
    if marker:
        parts.append(marker)
    if action.required:
        parts.append(f"Requires: {', '.join(action.required)}.")
    return f"- {action.name}: {' '.join(parts)}" if parts else f"- {action.name}"


def _grouped(actions: Sequence[Action], groups: Groups) -> list[tuple[str, str, list[Action]]]:
    """The groups in order of their first action, each with its actions."""
    found: dict[str, tuple[str, list[Action]]] = {}
    for action in actions:
        if action.name in groups:
            name, description = groups[action.name]
            found.setdefault(name, (description, []))[1].append(action)
    return [(name, description, members) for name, (description, members) in found.items()]


def describe_toon(
    summary: str, actions: Sequence[Action], groups: Groups | None = None, instructions: str = ""
) -> str:
    """The description line, a blank line, then TOON rows ``{action, desc, required}``.

    Every row has the same keys (a destructive action is marked inside ``desc``), so the
    rows stay one table: ``[N|]{action|desc|required}:``. Groups follow as a second table,
    ``groups[N|]{group|desc}:``.
    """
    rows = [{"action": a.name, "desc": _desc(a), "required": ",".join(a.required)} for a in actions]
    text = f"{summary}\n\n{to_toon(rows)}"
    grouped = _grouped(actions, groups or {})
    if grouped:
        table = [{"group": name, "desc": description} for name, description, _ in grouped]
        text += f"\n\n{to_toon({'groups': table})}"
    return _closed(text, instructions)


def describe_flat(summary: str, action: Action, instructions: str = "") -> str:
    """The description of one action exposed as its own tool: its own, else the tool's."""
    return _closed(_marked(_text(action) or summary, action), instructions)


def _marked(text: str, action: Action) -> str:
    """``text`` followed by the action's freshness marker (SPEC §15), if it has one."""
    marker = freshness(action.stale, action.fresh_for)
    return f"{text} {marker}".strip() if marker else text


def _closed(description: str, instructions: str) -> str:
    """The description with the tool's instructions after a blank line, when it has any."""
    return f"{description}\n\n{instructions}" if instructions else description


def _text(action: Action) -> str:
    # A line break in a description would start a line that is not an action.
    return fold_lines(action.description).strip()


def _desc(action: Action) -> str:
    text = _marked(_text(action), action)
    return (DESTRUCTIVE + text).rstrip() if action.destructive else text
