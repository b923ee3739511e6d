"""Unit tests of mcpfusion._tools.decorator: what ``@tool.action`` takes by default."""

from __future__ import annotations

from typing import Any

import pytest

from mcpfusion import DefinitionError, Fusion, Tool


def make_tool(name: str = "t", **options: Any) -> Tool:
    """A tool of a fresh app."""
    return Fusion("app").tool(name, **options)


def test_action_param_is_allowed_in_flat_tools() -> None:
    """Only grouped tools reserve the `action` argument."""
    make_tool("t", exposition="flat").action("a")(lambda action: None)
    with pytest.raises(DefinitionError, match="reserved"):
        make_tool("t").action("a")(lambda action: None)


def test_bare_decorator_uses_name_and_docstring() -> None:
    """`@tool.action` takes the function's name and its docstring's first paragraph."""
    tool = make_tool("t")

    @tool.action
    def lookup(key: str) -> str:
        """Look a key up
        in the store.

        Args:
            key: the key.
        """
        return key

    action = tool.actions["lookup"]
    assert action.description == "Look a key up in the store."
    assert lookup("k") == "k"


def test_explicit_description_wins() -> None:
    """An explicit description replaces the docstring; "" means none."""
    tool = make_tool("t")

    @tool.action(description="")
    def quiet() -> None:
        """Docstring."""

    assert tool.actions["quiet"].description == ""
