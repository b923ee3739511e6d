"""A tool: a named group of actions, and the MCP tool definitions it is listed as."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal, Self, TypeVar, overload

from mcpfusion.action import NAME_PATTERN, Action
from mcpfusion.description import describe_flat, describe_grouped, describe_toon
from mcpfusion.errors import DefinitionError
from mcpfusion.presenter import Presenter
from mcpfusion.schema import (
    DISCRIMINATOR,
    ParamTypes,
    flat_input_schema,
    grouped_input_schema,
)
from mcpfusion.structured import merged_output_schema

Exposition = Literal["grouped", "flat"]
EXPOSITIONS: Final[tuple[Exposition, ...]] = ("grouped", "flat")

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class Route:
    """Where a listed MCP tool leads: a tool, and its action when the name fixes one."""

    tool: Tool
    action: Action | None
    """``None`` for a grouped tool, whose ``action`` argument picks the action."""


@dataclass(frozen=True, slots=True)
class Definition:
    """One entry of ``tools/list``: the MCP tool object and the route behind its name."""

    name: str
    spec: dict[str, Any]
    route: Route


class Tool:
    """A named group of actions, listed as one MCP tool (grouped) or one per action (flat).

    Create tools with ``Fusion.tool``; declare actions with the ``action`` decorator::

        billing = app.tool("billing", description="Invoices and payments.")

        @billing.action(returns=invoice_view, read_only=True)
        async def get_invoice(invoice_id: str) -> dict[str, Any]: ...

    Raises:
        DefinitionError: on a name MCP does not allow or a bad option.
    """

    def __init__(
        self,
        name: str,
        *,
        description: str = "",
        exposition: Exposition = "grouped",
        separator: str = "_",
        context_type: type | None = None,
        on_change: Callable[[], None] | None = None,
        claim_name: Callable[[str, Tool], None] | None = None,
    ) -> None:
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            raise DefinitionError(
                f"tool name {name!r} is not allowed by MCP: use 1-64 letters, digits or _.-"
            )
        if not isinstance(description, str):
            raise DefinitionError(f"tool '{name}': description must be a str")
        if exposition not in EXPOSITIONS:
            raise DefinitionError(
                f"tool '{name}': exposition must be 'grouped' or 'flat'; got {exposition!r}"
            )
        if not isinstance(separator, str) or not NAME_PATTERN.fullmatch(separator):
            raise DefinitionError(
                f"tool '{name}': separator must be letters, digits or _.- (e.g. '_'); "
                f"got {separator!r}"
            )
        self.name = name
        self.description = description.strip()
        self.exposition: Exposition = exposition
        self.separator = separator
        self._context_type = context_type
        self._on_change = on_change
        self._claim_name = claim_name
        self._actions: dict[str, Action] = {}
        # Only a grouped tool unites its actions' parameters, so only it can have conflicts.
        self._param_types = ParamTypes(name) if exposition == "grouped" else None
        self._select = False
        self._toon = False
        self._definitions: tuple[Definition, ...] | None = None

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, actions={list(self._actions)})"

    @property
    def actions(self) -> Mapping[str, Action]:
        """The actions, by name, in definition order."""
        return MappingProxyType(self._actions)

    @property
    def listed_names(self) -> tuple[str, ...]:
        """The names this tool is listed under, known without building any schema."""
        if self.exposition == "flat":
            return tuple(self.flat_name(name) for name in self._actions)
        return (self.name,)

    @property
    def problem(self) -> str | None:
        """Why the tool cannot be listed yet, or ``None`` when it is complete.

        Both problems can only be judged once every action is defined (an action with a
        response schema may still come), so they are found when listing, not when defining.
        """
        if not self._actions:
            return f"tool '{self.name}' has no actions; declare one with its .action() decorator"
        if self._select and not self.select_keys:
            return (
                f"tool '{self.name}': enable_select() needs an action with returns= (a "
                "Presenter) or output_schema=, whose fields _select can pick"
            )
        return None

    @property
    def select_enabled(self) -> bool:
        """Whether ``_select`` is offered (``enable_select()``)."""
        return self._select

    @property
    def select_keys(self) -> tuple[str, ...]:
        """The ``_select`` enum: the sorted union of the actions' response keys (SPEC §11)."""
        return tuple(sorted({key for a in self._actions.values() for key in a.select_keys}))

    @overload
    def action(self, name: F, /) -> F: ...

    @overload
    def action(
        self,
        name: str | None = None,
        /,
        *,
        description: str | None = None,
        returns: Presenter | None = None,
        output_schema: Any = None,
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
    ) -> Callable[[F], F]: ...

    def action(
        self,
        name: str | Callable[..., Any] | None = None,
        /,
        *,
        description: str | None = None,
        returns: Presenter | None = None,
        output_schema: Any = None,
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
    ) -> Any:
        """Declares an action; use as ``@tool.action`` or ``@tool.action("name", ...)``.

        Args:
            name: the action's name; the function's name by default.
            description: what the action does; the docstring's first paragraph by default.
            returns: the Presenter that renders the handler's data.
            output_schema: a pydantic model the data must fit, sent as structured output.
            read_only: the action changes nothing.
            destructive: the action deletes or overwrites something.
            idempotent: repeating the call has no further effect.

        Returns:
            The decorator; it registers the function and returns it unchanged.
        """
        if callable(name):
            return self.action()(name)

        def register(handler: F) -> F:
            action = Action(
                self.name,
                name if name is not None else getattr(handler, "__name__", ""),
                handler,
                description=description if description is not None else _docstring_summary(handler),
                returns=returns,
                output_schema=output_schema,
                read_only=read_only,
                destructive=destructive,
                idempotent=idempotent,
                context_type=self._context_type,
                reserved=(DISCRIMINATOR,) if self.exposition == "grouped" else (),
            )
            self.add(action)
            return handler

        return register

    def add(self, action: Action) -> None:
        """Adds a built action, checking it against the others.

        Raises:
            DefinitionError: on a duplicate name, a flat name MCP does not allow or another
                tool already lists, or a parameter whose type conflicts with another
                action's.
        """
        if action.name in self._actions:
            raise DefinitionError(
                f"tool '{self.name}' already has an action '{action.name}'; rename one of them"
            )
        if self.exposition == "flat" and not NAME_PATTERN.fullmatch(self.flat_name(action.name)):
            raise DefinitionError(
                f"tool '{self.name}': the flat tool name '{self.flat_name(action.name)}' is "
                "not allowed by MCP (1-64 letters, digits or _.-); shorten the names"
            )
        if self._param_types is not None:
            self._param_types.add(action)
        elif self._claim_name is not None:  # last: a claimed name is taken for good
            self._claim_name(self.flat_name(action.name), self)
        self._actions[action.name] = action
        self._changed()

    def enable_select(self) -> Self:
        """Offers ``_select`` on every action (SPEC §11); returns the tool for chaining."""
        self._select = True
        self._changed()
        return self

    def toon_description(self) -> Self:
        """Lists the actions in the description as TOON rows (SPEC §10).

        Raises:
            DefinitionError: on a flat tool, which has no action list to describe.
        """
        if self.exposition == "flat":
            raise DefinitionError(
                f"tool '{self.name}': toon_description() lists the actions of a grouped "
                "tool; a flat tool lists each action as its own MCP tool"
            )
        self._toon = True
        self._changed()
        return self

    def get(self, name: str) -> Action | None:
        """The action called ``name``, if there is one."""
        return self._actions.get(name)

    def flat_name(self, action: str) -> str:
        """The MCP name of ``action`` in flat exposition: ``{tool}{separator}{action}``."""
        return f"{self.name}{self.separator}{action}"

    def definitions(self) -> tuple[Definition, ...]:
        """The MCP tools this tool is listed as; computed once until the tool changes.

        Raises:
            DefinitionError: if the tool is incomplete (see ``problem``).
        """
        if self._definitions is None:
            self._definitions = self._define()
        return self._definitions

    def _define(self) -> tuple[Definition, ...]:
        problem = self.problem
        if problem is not None:
            raise DefinitionError(problem)
        actions = list(self._actions.values())
        keys = self.select_keys if self._select else None
        if self.exposition == "flat":
            return tuple(
                Definition(
                    self.flat_name(a.name),
                    self._spec(
                        self.flat_name(a.name),
                        describe_flat(self._summary, a),
                        flat_input_schema(a, keys),
                        [a],
                    ),
                    Route(self, a),
                )
                for a in actions
            )
        describe = describe_toon if self._toon else describe_grouped
        spec = self._spec(
            self.name,
            describe(self._summary, actions),
            grouped_input_schema(self.name, actions, keys),
            actions,
        )
        return (Definition(self.name, spec, Route(self, None)),)

    @property
    def _summary(self) -> str:
        return self.description or self.name

    def _spec(
        self, name: str, description: str, schema: dict[str, Any], actions: Sequence[Action]
    ) -> dict[str, Any]:
        spec: dict[str, Any] = {"name": name, "description": description, "inputSchema": schema}
        outputs = [a.output for a in actions]
        if all(outputs):
            spec["outputSchema"] = merged_output_schema(
                [o.advertised(selectable=self._select) for o in outputs if o is not None]
            )
        spec["annotations"] = {
            "readOnlyHint": all(a.read_only for a in actions),
            "destructiveHint": any(a.destructive for a in actions),
            "idempotentHint": all(a.idempotent for a in actions),
        }
        return spec

    def _changed(self) -> None:
        self._definitions = None
        if self._on_change is not None:
            self._on_change()


def _docstring_summary(handler: Callable[..., Any]) -> str:
    """The first paragraph of a handler's docstring, on one line."""
    if not (inspect.isfunction(handler) or inspect.ismethod(handler)):
        return ""  # a partial's or an object's docstring describes its class, not the action
    doc = inspect.getdoc(handler) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())
