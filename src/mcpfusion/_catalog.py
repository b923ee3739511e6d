"""The catalog: what an app serves, built once from its tools (``tools/list`` and the routes)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
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
    """

    definitions: tuple[Definition, ...]
    routes: Mapping[str, Route]
    problems: tuple[str, ...]

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
        return cls(tuple(definitions), routes, tuple(problems))

    def list_tools(self) -> list[dict[str, Any]]:
        """The MCP ``Tool`` objects of ``tools/list``, as JSON-compatible dicts (a copy).

        Raises:
            DefinitionError: if a tool is incomplete.
        """
        if self.problems:
            raise DefinitionError("; ".join(self.problems))
        return copy.deepcopy([d.tool for d in self.definitions])


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


def _define(tool: Tool) -> list[Definition]:
    actions = list(tool.actions.values())
    keys = tool.select_keys if tool.select_enabled else None
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
