"""Unit tests of mcpfusion._tools.description: grouped, TOON and flat descriptions."""

from __future__ import annotations

from mcpfusion._tools.action import Action
from mcpfusion._tools.description import describe_flat, describe_grouped, describe_toon


def _a(name: str, description: str = "", *, destructive: bool = False) -> Action:
    return Action("t", name, lambda x, y=1: None, description=description, destructive=destructive)


def test_grouped_description_without_descriptions() -> None:
    """An action without a description still lists its requirements."""
    assert describe_grouped("Tool.", [_a("a")]) == "Tool.\n\nActions:\n- a: Requires: x."


def test_destructive_without_description() -> None:
    """A destructive action is marked even without a description."""
    assert describe_grouped("T.", [_a("d", destructive=True)]).endswith(
        "- d: [DESTRUCTIVE] Requires: x."
    )
    assert describe_toon("T.", [_a("d", destructive=True)]).endswith('d|"[DESTRUCTIVE]"|x')


def test_line_breaks_cannot_forge_actions() -> None:
    """A description's line breaks are folded, so it stays on its action's line."""
    text = describe_grouped("T.", [_a("a", "One.\n- b: fake")])
    assert text.splitlines()[-1] == "- a: One. - b: fake. Requires: x."


def test_flat_description_falls_back_to_the_tool() -> None:
    """A flat tool without an action description uses the tool's."""
    assert describe_flat("Tool.", _a("a")) == "Tool."
    assert describe_flat("Tool.", _a("a", "Own.")) == "Own."
