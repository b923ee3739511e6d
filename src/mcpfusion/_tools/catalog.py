"""The catalog: what an app serves, built once from its tools (``tools/list`` and the routes)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal, get_args

from mcpfusion._errors import DefinitionError
from mcpfusion._tools.action import Action
from mcpfusion._tools.description import Groups, describe_flat, describe_grouped, describe_toon
from mcpfusion._tools.lean import lean_annotations, lean_schema
from mcpfusion._tools.schema import DISCRIMINATOR, flat_input_schema, grouped_input_schema
from mcpfusion._tools.structured import merged_output_schema
from mcpfusion._tools.targets import Targets, static_problems
from mcpfusion._tools.tool import Tool

Definitions = Literal["full", "lean"]
"""How tool definitions are written: in full, or lean (``_lean``)."""

DEFINITIONS: Final[tuple[Definitions, ...]] = get_args(Definitions)


@dataclass(frozen=True, slots=True)
class Route:
    """Where a listed MCP tool leads.

    Attributes:
        tool: the tool.
        action: the action when the name fixes one (flat), else ``None``: the ``action``
            argument picks one of ``actions``.
        select_keys: the names ``_select`` accepts, or ``None`` when it is not offered.
        name: the listed name.
        actions: the actions reachable through this name, by name.
        elsewhere: for a split tool, the other half's actions -> the name listing them.
    """

    tool: Tool
    action: Action | None
    select_keys: tuple[str, ...] | None
    name: str
    actions: Mapping[str, Action]
    elsewhere: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


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
            to pick), and static suggestions naming no action; listing refuses such a
            catalog, calls route around them.
        targets: how suggestion and ``available_actions`` targets are checked and written.
        scopes: every scope some action requires: the only scopes of a caller that change
            what it sees.
        lean: whether definitions are written lean (``_lean``), callers' views too.
        tasked: the listed names with an action whose calls may run as MCP tasks.
        per_caller: whether an action has a Presenter per caller (``returns=`` a mapping),
            whose ``_select`` keys each caller's definition names.
    """

    definitions: tuple[Definition, ...]
    routes: Mapping[str, Route]
    problems: tuple[str, ...]
    targets: Targets
    scopes: frozenset[str] = frozenset()
    lean: bool = False
    tasked: frozenset[str] = frozenset()
    per_caller: bool = False
    _views: dict[frozenset[str], tuple[Definition, ...]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def build(cls, tools: Iterable[Tool], *, lean: bool = False) -> Catalog:
        """Describes every tool; a tool that cannot be listed yet becomes a problem.

        ``lean`` writes the definitions in their lean form (``_lean``).
        """
        definitions: list[Definition] = []
        problems: list[str] = []
        for tool in tools:
            problem = _problem(tool)
            if problem is None:
                definitions.extend(_define(tool, lean))
            else:
                problems.append(problem)
        routes = MappingProxyType({d.name: d.route for d in definitions})
        targets = Targets.of(routes)
        for route in routes.values():
            for action in route.actions.values():
                for presenter in action.presenters:
                    problems.extend(static_problems(presenter, targets, route))
                action.freeze()
        # The scopes that pick a Presenter per caller change what a caller sees, too.
        scopes = frozenset(
            scope
            for r in routes.values()
            for a in r.actions.values()
            for scope in (a.requires | a.views.scopes if a.views else a.requires)
        )
        tasked = frozenset(
            name for name, r in routes.items() if any(a.task != "never" for a in r.actions.values())
        )
        per_caller = any(a.views for r in routes.values() for a in r.actions.values())
        return cls(
            tuple(definitions),
            routes,
            tuple(dict.fromkeys(problems)),
            targets,
            scopes,
            lean,
            tasked,
            per_caller,
        )

    def tasked_action(self, name: str, arguments: Mapping[str, Any] | None) -> Action | None:
        """The action a ``tools/call`` reaches when it may run as a task, else ``None``.

        ``None`` too when the name or the ``action`` argument reaches no action: the call
        then answers its error in its own request, as any other call.
        """
        route = self.routes.get(name)
        if route is None or name not in self.tasked:
            return None
        action = route.action
        if action is None:
            picked = (arguments or {}).get(DISCRIMINATOR)
            action = route.actions.get(picked) if isinstance(picked, str) else None
        return None if action is None or action.task == "never" else action

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
        if key == self.scopes and not self.per_caller:
            return self.definitions
        shown = self._views.get(key)
        if shown is None:
            shown = self._views[key] = tuple(_visible(self.definitions, key, self.lean))
        return shown

    def visible_names(self, scopes: frozenset[str]) -> list[str]:
        """The listed names a caller holding ``scopes`` sees."""
        return [d.name for d in self.view(scopes)]

    @staticmethod
    def visible_actions(route: Route, scopes: frozenset[str]) -> list[str]:
        """The names of the actions behind ``route`` a caller holding ``scopes`` may call."""
        return [a.name for a in route.actions.values() if a.shown_to(scopes)]

    @staticmethod
    def visible_elsewhere(route: Route, scopes: frozenset[str]) -> dict[str, str]:
        """A split tool's other-half actions such a caller may call -> the name listing them."""
        tool = route.tool
        return {a: name for a, name in route.elsewhere.items() if tool.actions[a].shown_to(scopes)}


def _visible(
    definitions: Iterable[Definition], scopes: frozenset[str], lean: bool
) -> Iterable[Definition]:
    for definition in definitions:
        actions = list(definition.route.actions.values())
        shown = [a for a in actions if a.shown_to(scopes)]
        if len(shown) == len(actions) and not any(a.views for a in shown):
            yield definition
        elif shown:  # some actions hidden, or a Presenter per caller: this caller's `_select`
            yield from _define(definition.route.tool, lean, shown, scopes)


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


def _define(
    tool: Tool,
    lean: bool,
    shown: Sequence[Action] | None = None,
    scopes: frozenset[str] | None = None,
) -> list[Definition]:
    """``tool``'s definitions; with ``shown``, described for those actions only, as a
    caller holding ``scopes`` sees them (a view)."""
    actions = list(tool.actions.values()) if shown is None else list(shown)
    summary = tool.description or tool.name
    if tool.exposition == "flat":
        keys = tool.select_keys if tool.select_enabled else None
        return [
            Definition(
                name := tool.flat_name(action.name),
                _mcp_tool(
                    tool,
                    name,
                    describe_flat(summary, action, tool.instructions),
                    flat_input_schema(action, keys, lean=lean),
                    [action],
                    lean,
                ),
                Route(tool, action, keys, name, MappingProxyType({action.name: action})),
            )
            for action in actions
        ]
    halves: dict[str, list[Action]] = {}
    for action in actions:  # one name when grouped, two when split
        halves.setdefault(tool.listed_name(action), []).append(action)
    describe = describe_toon if tool.toon else describe_grouped
    groups: Groups = {
        a.name: (group.name, group.description)
        for a in actions
        if (group := tool.group_of(a.name)) is not None
    }
    definitions = []
    for name, members in halves.items():
        keys = _select_keys(members, scopes) if tool.select_enabled else None
        spec = _mcp_tool(
            tool,
            name,
            describe(summary, members, groups, tool.instructions),
            grouped_input_schema(name, members, keys, lean=lean),
            members,
            lean,
        )
        elsewhere = {
            a.name: other for other, found in halves.items() if other != name for a in found
        }
        reachable = MappingProxyType({a.name: a for a in members})
        route = Route(tool, None, keys, name, reachable, MappingProxyType(elsewhere))
        definitions.append(Definition(name, spec, route))
    return definitions


def _select_keys(
    actions: Sequence[Action], scopes: frozenset[str] | None = None
) -> tuple[str, ...] | None:
    """The ``_select`` enum of a listed tool's actions (for a caller holding ``scopes``, the
    keys of its own views); ``None`` when none has a schema."""
    if scopes is None:
        return tuple(sorted({key for a in actions for key in a.select_keys})) or None
    return tuple(sorted({key for a in actions for key in a.select_keys_for(scopes)})) or None


def _mcp_tool(
    tool: Tool,
    name: str,
    description: str,
    input_schema: dict[str, Any],
    actions: Sequence[Action],
    lean: bool,
) -> dict[str, Any]:
    """The MCP ``Tool`` object: name, description, schemas and annotations (SPEC §13)."""
    spec: dict[str, Any] = {"name": name}
    if tool.title is not None:
        spec["title"] = tool.title
    spec["description"] = description
    spec["inputSchema"] = input_schema
    if tool.icons:
        spec["icons"] = [icon.to_mcp() for icon in tool.icons]
    outputs = [a.output for a in actions]
    if all(outputs):
        advertised = [
            o.advertised(selectable=tool.select_enabled) for o in outputs if o is not None
        ]
        if lean:
            names = [o.name for o in outputs if o is not None]
            advertised = [lean_schema(a, n) for a, n in zip(advertised, names, strict=True)]
        spec["outputSchema"] = merged_output_schema(advertised)
    hints = (
        all(a.read_only for a in actions),
        any(a.destructive for a in actions),
        all(a.idempotent for a in actions),
    )
    if not lean:
        spec["annotations"] = dict(zip(_HINTS, hints, strict=True))
    elif found := lean_annotations(*hints):
        spec["annotations"] = found
    declared = [a.open_world for a in actions if a.open_world is not None]
    # MCP assumes an open world: lean definitions send only a closed one; full ones send
    # what was declared. Nothing declared sends nothing, as before the option existed.
    if declared and not (lean and any(declared)):
        spec.setdefault("annotations", {})["openWorldHint"] = any(declared)
    return spec


_HINTS: Final = ("readOnlyHint", "destructiveHint", "idempotentHint")
