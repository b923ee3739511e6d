"""Unit tests of mcpfusion._tools.catalog: definitions and routes, built once per app."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from mcpfusion import DefinitionError, Fusion, Presenter
from mcpfusion._tools.catalog import Catalog

pytestmark = pytest.mark.anyio


class Thing(BaseModel):
    """A presented entity."""

    id: int
    name: str


def test_grouped_definition_routes_by_argument() -> None:
    """A grouped tool is one definition whose route picks the action from the arguments."""
    app = Fusion("app")
    app.tool("t").action("a")(lambda: None)
    [definition] = Catalog.build(app.tools.values()).definitions
    assert definition.name == "t"
    assert definition.route.action is None


def test_flat_definitions_route_to_their_action() -> None:
    """A flat tool has one definition per action, each routed to it."""
    app = Fusion("app")
    tool = app.tool("t", exposition="flat", separator="-")
    tool.action("a")(lambda: None)
    tool.action("b")(lambda: None)
    catalog = Catalog.build(app.tools.values())
    assert [
        (d.name, d.route.action.name if d.route.action else None) for d in catalog.definitions
    ] == [("t-a", "a"), ("t-b", "b")]


def test_routes_carry_the_select_keys() -> None:
    """A route knows what _select accepts, or None when the tool does not offer it."""
    app = Fusion("app")
    app.tool("plain").action("a")(lambda: None)
    app.tool("picky").enable_select().action("a", returns=Presenter("Thing", Thing))(lambda: None)
    routes = Catalog.build(app.tools.values()).routes
    assert routes["plain"].select_keys is None
    assert routes["picky"].select_keys == ("id", "name")


def test_incomplete_tools_are_problems_not_routes() -> None:
    """A tool without actions is left out and reported; listing refuses the catalog."""
    app = Fusion("app")
    app.tool("empty")
    app.tool("ok").action("a")(lambda: None)
    catalog = Catalog.build(app.tools.values())
    assert list(catalog.routes) == ["ok"]
    assert catalog.problems == (
        "tool 'empty' has no actions; declare one with its .action() decorator",
    )
    with pytest.raises(DefinitionError, match="has no actions"):
        catalog.list_tools()


def test_list_tools_returns_a_copy() -> None:
    """Changing what list_tools returned does not change the catalog."""
    app = Fusion("app")
    app.tool("t").action("a")(lambda: None)
    first = app.list_tools()
    first[0]["name"] = "changed"
    assert app.list_tools()[0]["name"] == "t"


async def test_the_catalog_is_built_once_per_definition_state() -> None:
    """Listing and calling reuse one catalog; a new definition makes the next read rebuild it."""
    app = Fusion("app")
    tool = app.tool("t")
    tool.action("a")(lambda: None)
    app.list_tools()
    catalog = app._catalog
    await app.call_tool("t", {"action": "a"})
    app.list_tools()
    assert app._catalog is catalog
    tool.action("b")(lambda: None)
    assert app._catalog is None
    assert app.list_tools()[0]["inputSchema"]["properties"]["action"]["enum"] == ["a", "b"]


def test_freeze_refuses_an_incomplete_tool() -> None:
    """Freezing (as serving does) stops an app with a tool that cannot be listed."""
    app = Fusion("app")
    app.tool("empty")
    with pytest.raises(DefinitionError, match="has no actions"):
        app.freeze()


def test_definitions_after_freezing_raise() -> None:
    """Define, then serve: a tool or action added after the app is frozen raises."""
    app = Fusion("app")
    tool = app.tool("t")
    tool.action("a")(lambda: None)
    app.freeze()
    with pytest.raises(DefinitionError, match="is frozen"):
        app.tool("late")
    with pytest.raises(DefinitionError, match="is frozen"):
        tool.action("b")(lambda: None)
    with pytest.raises(DefinitionError, match="is frozen"):
        tool.enable_select()
    assert list(tool.actions) == ["a"]
