"""Tool descriptions: the action list of a grouped tool, as text or as TOON (SPEC §10)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from mcpfusion._action import Action
from mcpfusion._datablock import to_toon
from mcpfusion._format import fold_lines
from mcpfusion._schema import sentence

DESTRUCTIVE: Final = "[DESTRUCTIVE] "
"""Prefixed to a destructive action's description, in both forms."""


def describe_grouped(summary: str, actions: Sequence[Action]) -> str:
    """The description line, a blank line, then one bullet per action::

    Invoices and payments.

    Actions:
    - get_invoice: Fetch one invoice. Requires: invoice_id.
    - void_invoice: [DESTRUCTIVE] Void an invoice. Requires: invoice_id.
    """
    lines = [summary, "", "Actions:"]
    for action in actions:
        parts = [DESTRUCTIVE.strip()] if action.destructive else []
        text = _text(action)
        if text:
            parts.append(sentence(text))
        if action.required:
            parts.append(f"Requires: {', '.join(action.required)}.")
        lines.append(f"- {action.name}: {' '.join(parts)}" if parts else f"- {action.name}")
    return "\n".join(lines)


def describe_toon(summary: str, actions: Sequence[Action]) -> str:
    """The description line, a blank line, then TOON rows ``{action, desc, required}``.

    Every row has the same keys (a destructive action is marked inside ``desc``), so the
    rows stay one table: ``[N|]{action|desc|required}:``.
    """
    rows = [{"action": a.name, "desc": _desc(a), "required": ",".join(a.required)} for a in actions]
    return f"{summary}\n\n{to_toon(rows)}"


def describe_flat(summary: str, action: Action) -> str:
    """The description of one action exposed as its own tool: its own, else the tool's."""
    return _text(action) or summary


def _text(action: Action) -> str:
    # A line break in a description would start a line that is not an action.
    return fold_lines(action.description).strip()


def _desc(action: Action) -> str:
    text = _text(action)
    return (DESTRUCTIVE + text).rstrip() if action.destructive else text
