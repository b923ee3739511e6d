"""The catalog: what an app serves, built once from its tools (``tools/list`` and the routes)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from mcpfusion._action import Action
from mcpfusion._description import describe_flat, describe_grouped, describe_toon
from mcpfusion._errors import DefinitionError
from mcpfusion._schema import flat_input_schema, grouped_input_schema
from mcpfusion._structured import merged_output_schema
from mcpfusion._tool import Tool


@dataclass(frozen=True, slots=True)
class Route:
    """Where a listed MCP tool leads.

    Attributes:
        tool: the tool.
        action: the action when the name fixes one (flat), else ``None``: a grouped tool's
            ``action`` argument picks it.
        select_keys: the names ``_select`` accepts, or ``None`` when it is not offered.
    """

    tool: Tool
    action: Action | None
    select_keys: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class Definition:
    """One entry of ``tools/list``: the MCP tool object and the route behind its name."""

    name: str
    tool: dict[str, Any]
    route: Route


@dataclass(frozen=True, slots=True)
class Catalog:
    """An app's tools as served: their definitions and routes, computed once.

    Attributes:
        definitions: the ``tools/list`` entries, in definition order.
        routes: each listed name's route.
        problems: why incomplete tools were left out (no actions, nothing for ``_select``
            to pick); listing refuses such a catalog, calls route around them.
        scopes: every scope some action requires: the only scopes of a caller that change
            what it sees.
    """

    definitions: tuple[Definition, ...]
    routes: Mapping[str, Route]
    problems: tuple[str, ...]
    scopes: frozenset[str] = frozenset()
    _views: dict[frozenset[str], tuple[Definition, ...]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def build(cls, tools: Iterable[Tool]) -> Catalog:
        """Describes every tool; a tool that cannot be listed yet becomes a problem."""
        definitions: list[Definition] = []
        problems: list[str] = []
        for tool in tools:
            problem = _problem(tool)
            if problem is None:
                definitions.extend(_define(tool))
            else:
                problems.append(problem)
        routes = MappingProxyType({d.name: d.route for d in definitions})
        scopes = frozenset(
            scope for d in definitions for a in _actions(d.route) for scope in a.requires
        )
        return cls(tuple(definitions), routes, tuple(problems), scopes)

    def list_tools(self, scopes: frozenset[str] | None = None) -> list[dict[str, Any]]:
        """The MCP ``Tool`` objects of ``tools/list``, as JSON-compatible dicts (a copy).

        Args:
            scopes: list only what these scopes allow (``view``); ``None`` lists all.

        Raises:
            DefinitionError: if a tool is incomplete.
        """
        if self.problems:
            raise DefinitionError("; ".join(self.problems))
        shown = self.definitions if scopes is None else self.view(scopes)
        return copy.deepcopy([d.tool for d in shown])

    def view(self, scopes: frozenset[str]) -> tuple[Definition, ...]:
        """The definitions a caller holding ``scopes`` sees, made once per set that matters.

        An action is shown when the caller holds every scope it requires; a grouped tool
        is described again for its shown actions (schema, description, ``_select``,
        annotations) and disappears without any; a flat tool's definitions are reused.
        """
        key = scopes & self.scopes
        if key == self.scopes:
            return self.definitions
        shown = self._views.get(key)
        if shown is None:
            shown = self._views[key] = tuple(_visible(self.definitions, key))
        return shown

    def visible_names(self, scopes: frozenset[str]) -> list[str]:
        """The listed names a caller holding ``scopes`` sees."""
        return [d.name for d in self.view(scopes)]

    def visible_actions(self, tool: Tool, scopes: frozenset[str]) -> list[str]:
        """The names of ``tool``'s actions a caller holding ``scopes`` may call."""
        return [a.name for a in tool.actions.values() if a.requires <= scopes]


def _actions(route: Route) -> Iterable[Action]:
    return (route.action,) if route.action is not None else route.tool.actions.values()


def _visible(definitions: Iterable[Definition], scopes: frozenset[str]) -> Iterable[Definition]:
    for definition in definitions:
        actions = list(_actions(definition.route))
        shown = [a for a in actions if a.requires <= scopes]
        if len(shown) == len(actions):
            yield definition
        elif shown:  # a grouped tool, some of whose actions are hidden
            yield from _define(definition.route.tool, shown)


def _problem(tool: Tool) -> str | None:
    """Why ``tool`` cannot be listed, judged once every action is defined."""
    if not tool.actions:
        return f"tool '{tool.name}' has no actions; declare one with its .action() decorator"
    if tool.select_enabled and not tool.select_keys:
        return (
            f"tool '{tool.name}': enable_select() needs an action with returns= (a "
            "Presenter) or output_schema=, whose fields _select can pick"
        )
    return None


def _define(tool: Tool, shown: Sequence[Action] | None = None) -> list[Definition]:
    actions = list(tool.actions.values()) if shown is None else list(shown)
    keys = tool.select_keys if tool.select_enabled else None
    if shown is not None and keys is not None:
        # A caller's view offers _select over the keys of the actions it sees, if any.
        keys = tuple(sorted({key for a in actions for key in a.select_keys})) or None
    summary = tool.description or tool.name
    if tool.exposition == "flat":
        return [
            Definition(
                name := tool.flat_name(action.name),
                _mcp_tool(
                    tool,
                    name,
                    describe_flat(summary, action),
                    flat_input_schema(action, keys),
                    [action],
                ),
                Route(tool, action, keys),
            )
            for action in actions
        ]
    describe = describe_toon if tool.toon else describe_grouped
    spec = _mcp_tool(
        tool,
        tool.name,
        describe(summary, actions),
        grouped_input_schema(tool.name, actions, keys),
        actions,
    )
    return [Definition(tool.name, spec, Route(tool, None, keys))]


def _mcp_tool(
    tool: Tool,
    name: str,
    description: str,
    input_schema: dict[str, Any],
    actions: Sequence[Action],
) -> dict[str, Any]:
    """The MCP ``Tool`` object: name, description, schemas and annotations (SPEC §13)."""
    spec: dict[str, Any] = {"name": name, "description": description, "inputSchema": input_schema}
    outputs = [a.output for a in actions]
    if all(outputs):
        spec["outputSchema"] = merged_output_schema(
            [o.advertised(selectable=tool.select_enabled) for o in outputs if o is not None]
        )
    spec["annotations"] = {
        "readOnlyHint": all(a.read_only for a in actions),
        "destructiveHint": any(a.destructive for a in actions),
        "idempotentHint": all(a.idempotent for a in actions),
    }
    return spec
