"""A tool: a named group of actions, as its app's code defines it."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final, Literal, Protocol, Self, TypeVar, overload

from mcpfusion._action import NAME_PATTERN, Action
from mcpfusion._errors import DefinitionError
from mcpfusion._presenter import Presenter
from mcpfusion._schema import DISCRIMINATOR, ParamTypes

Exposition = Literal["grouped", "flat"]
EXPOSITIONS: Final[tuple[Exposition, ...]] = ("grouped", "flat")

F = TypeVar("F", bound=Callable[..., Any])


class Owner(Protocol):
    """What a tool needs from the app that created it."""

    @property
    def context_type(self) -> type | None:
        """The class the app's context factory returns, for parameter injection."""
        ...

    @property
    def state_type(self) -> type | None:
        """The class of the app's state (its lifespan's yield), for parameter injection."""
        ...

    def _defining(self, tool: Tool, listed: Sequence[str]) -> None:
        """Checks that the app still takes definitions and that ``listed`` names are free."""
        ...


class Tool:
    """A named group of actions, listed as one MCP tool (grouped) or one per action (flat).

    Tools are created by ``Fusion.tool``; declare actions with the ``action`` decorator::

        billing = app.tool("billing", description="Invoices and payments.")

        @billing.action(returns=invoice_view, read_only=True)
        async def get_invoice(invoice_id: str) -> dict[str, Any]: ...

    Raises:
        DefinitionError: on a name MCP does not allow or a bad option.
    """

    def __init__(
        self,
        app: Owner,
        name: str,
        *,
        description: str = "",
        exposition: Exposition = "grouped",
        separator: str = "_",
        requires: Collection[str] = (),
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
        if isinstance(requires, str) or not all(isinstance(s, str) and s for s in requires):
            raise DefinitionError(f"tool '{name}': requires is a set of scope names")
        self.name = name
        self.requires = frozenset(requires)
        """The scopes an action needs when it does not say (``requires=`` on the action)."""
        self.description = description.strip()
        self.exposition: Exposition = exposition
        self.separator = separator
        self._app = app
        self._actions: dict[str, Action] = {}
        # Only a grouped tool unites its actions' parameters, so only it can have conflicts.
        self._param_types = ParamTypes(name) if exposition == "grouped" else None
        self._select = False
        self._toon = False

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
    def select_enabled(self) -> bool:
        """Whether ``_select`` is offered (``enable_select()``)."""
        return self._select

    @property
    def toon(self) -> bool:
        """Whether the description lists the actions as TOON rows (``toon_description()``)."""
        return self._toon

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
        requires: Collection[str] | None = None,
        timeout: float | None = None,
        loggable: Collection[str] = (),
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
        requires: Collection[str] | None = None,
        timeout: float | None = None,
        loggable: Collection[str] = (),
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
            requires: the scopes a caller needs to see and call it (the tool's
                ``requires=`` by default); a caller without them does not find it in
                ``tools/list`` and gets ``FORBIDDEN`` if it calls it anyway.
            timeout: seconds the handler may run; past them it is cancelled and the agent
                gets ``TIMEOUT``.
            loggable: parameter names whose values an audit log may record (none by
                default: arguments can hold personal data).

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
                context_type=self._app.context_type,
                reserved=(DISCRIMINATOR,) if self.exposition == "grouped" else (),
                requires=self.requires if requires is None else requires,
                timeout=timeout,
                loggable=loggable,
                state_type=self._app.state_type,
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
        flat = [self.flat_name(action.name)] if self.exposition == "flat" else []
        self._app._defining(self, [])
        if self._param_types is not None:
            self._param_types.add(action)
        self._app._defining(self, flat)  # last: a listed name is taken for good
        self._actions[action.name] = action

    def enable_select(self) -> Self:
        """Offers ``_select`` on every action (SPEC §11); returns the tool for chaining."""
        self._app._defining(self, [])
        self._select = True
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
        self._app._defining(self, [])
        self._toon = True
        return self

    def get(self, name: str) -> Action | None:
        """The action called ``name``, if there is one."""
        return self._actions.get(name)

    def flat_name(self, action: str) -> str:
        """The MCP name of ``action`` in flat exposition: ``{tool}{separator}{action}``."""
        return f"{self.name}{self.separator}{action}"


def _docstring_summary(handler: Callable[..., Any]) -> str:
    """The first paragraph of a handler's docstring, on one line."""
    if not (inspect.isfunction(handler) or inspect.ismethod(handler)):
        return ""  # a partial's or an object's docstring describes its class, not the action
    doc = inspect.getdoc(handler) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())
