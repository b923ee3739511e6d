"""Unit tests of mcpfusion._tools.tool: definition-time checks and the tool's options."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from mcpfusion import DefinitionError, Fusion, Presenter, Tool
from mcpfusion.testing import FusionTester


def make_tool(name: Any = "t", **options: Any) -> Tool:
    """A tool of a fresh app."""
    return Fusion("app").tool(name, **options)


class Thing(BaseModel):
    """A presented entity."""

    id: int
    name: str


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, "slash/no", 3])
def test_tool_names_mcp_allows(name: Any) -> None:
    """A name MCP does not allow raises, saying what is allowed."""
    with pytest.raises(DefinitionError, match=r"1-64 letters, digits or _\.-"):
        make_tool(name)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"exposition": "nested"}, "exposition must be 'grouped', 'flat' or 'split'"),
        ({"separator": " "}, "separator must be"),
        ({"description": None}, "description must be a str"),
    ],
)
def test_bad_tool_options(options: dict[str, Any], message: str) -> None:
    """Bad options raise at definition time."""
    with pytest.raises(DefinitionError, match=message):
        make_tool("t", **options)


def test_duplicate_action() -> None:
    """Two actions with one name raise, and the first stays."""
    tool = make_tool("t")
    tool.action("a")(lambda: 1)
    with pytest.raises(DefinitionError, match="already has an action 'a'"):
        tool.action("a")(lambda: 2)
    assert list(tool.actions) == ["a"]


def _lookup(key: str, limit: int = 10, where: Thing | None = None) -> None: ...


def _lookup_other_thing(where: Other) -> None: ...


class Other(BaseModel):
    """A model whose class name differs from Thing's but whose fields are the same."""

    id: int
    name: str


def test_many_actions_share_their_parameters() -> None:
    """100 actions with the same parameters list each parameter once (timed in benchmarks)."""
    app = Fusion("app")
    tool = app.tool("t")
    for index in range(100):
        tool.action(f"a{index}")(_lookup)
    assert len(app.list_tools()[0]["inputSchema"]["properties"]) == 4


def test_conflicts_are_found_among_many_actions() -> None:
    """A parameter type conflict with any earlier action is still rejected when defined."""
    tool = make_tool("t")
    for index in range(20):
        tool.action(f"a{index}")(_lookup)
    with pytest.raises(DefinitionError, match=r"parameter 'where' is .* in action 'a0' but"):
        tool.action("b")(_lookup_other_thing)
    assert "b" not in tool.actions


def test_flat_name_too_long() -> None:
    """A flat name past 64 characters raises when the action is defined."""
    tool = make_tool("t" * 40, exposition="flat")
    with pytest.raises(DefinitionError, match="flat tool name"):
        tool.action("a" * 30)(lambda: None)


def test_toon_description_on_a_flat_tool() -> None:
    """A flat tool has no action list, so toon_description() is a mistake."""
    with pytest.raises(DefinitionError, match="toon_description"):
        make_tool("t", exposition="flat").toon_description()


def test_select_keys_union_is_sorted() -> None:
    """The `_select` enum sorts the keys of every action's response schema."""
    tool = make_tool("t")
    tool.action("a", returns=Presenter("Thing", Thing))(lambda: None)
    tool.action("b", output_schema=dict[str, int])(lambda: None)
    assert tool.select_keys == ("id", "name")


def test_shared_parameter_keeps_each_actions_own_validation() -> None:
    """Optional in one action, required and constrained in another: each validates its own."""
    app = Fusion("app")
    tool = app.tool("issues")

    @tool.action(read_only=True)
    def find(assignee: str | None = None) -> str:
        return f"find {assignee}"

    @tool.action
    def assign(assignee: Annotated[str, Field(min_length=2)]) -> str:
        return f"assign {assignee}"

    tester = FusionTester(app)
    assert tester.call_sync("issues", "find").text == "find None"
    assert tester.call_sync("issues", "find", assignee=None).text == "find None"
    assert tester.call_sync("issues", "find", assignee="a").text == "find a"
    assert tester.call_sync("issues", "assign").is_error
    assert tester.call_sync("issues", "assign", assignee="a").is_error
    assert tester.call_sync("issues", "assign", assignee="ab").text == "assign ab"
