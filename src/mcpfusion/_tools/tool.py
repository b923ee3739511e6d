"""A tool: a named group of actions, as its app's code defines it."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from types import MappingProxyType
from typing import Final, Literal, Protocol, Self

from mcpfusion._errors import DefinitionError
from mcpfusion._tools.action import Action
from mcpfusion._tools.decorator import ActionDecorator, ActionGroup, Defaults, Group
from mcpfusion._tools.definition import NAME_PATTERN
from mcpfusion._tools.icon import Icon, icons_of, optional_text
from mcpfusion._tools.listing import Listing
from mcpfusion._tools.schema import ParamTypes
from mcpfusion._wire.format import fold_lines

Exposition = Literal["grouped", "flat", "split"]
EXPOSITIONS: Final[tuple[Exposition, ...]] = ("grouped", "flat", "split")

_GROUP_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,32}")


class Owner(Defaults, Protocol):
    """What a tool needs from the app that created it."""

    def _defining(self, tool: Tool, listed: Sequence[str]) -> None:
        """Checks that the app still takes definitions and that ``listed`` names are free."""
        ...

    async def _catalog_changed(self, tenant: str | None) -> None:
        """Tells whoever serves the app that what ``tenant`` (or everyone) sees changed."""
        ...


class Tool(ActionDecorator):
    """A named group of actions, listed as one MCP tool (grouped), one per action (flat), or
    two: the read-only actions and the others (split).

    Tools are created by ``Fusion.tool``; declare actions with the ``action`` decorator::

        billing = app.tool("billing", description="Invoices and payments.")

        @billing.action(returns=invoice_view, read_only=True)
        async def get_invoice(invoice_id: str) -> dict[str, Any]: ...

    Raises:
        DefinitionError: on a name MCP does not allow or a bad option.
    """

    _app: Owner  # the decorator reads only its Defaults; the tool also tells it of changes

    def __init__(
        self,
        app: Owner,
        name: str,
        *,
        description: str = "",
        exposition: Exposition = "grouped",
        separator: str = "_",
        requires: Collection[str] = (),
        instructions: str = "",
        split_names: tuple[str, str] | None = None,
        title: str | None = None,
        icons: Sequence[Icon] = (),
    ) -> None:
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            raise DefinitionError(
                f"tool name {name!r} is not allowed by MCP: use 1-64 letters, digits or _.-"
            )
        if not isinstance(description, str):
            raise DefinitionError(f"tool '{name}': description must be a str")
        if exposition not in EXPOSITIONS:
            raise DefinitionError(
                f"tool '{name}': exposition must be 'grouped', 'flat' or 'split'; "
                f"got {exposition!r}"
            )
        if not isinstance(separator, str) or not NAME_PATTERN.fullmatch(separator):
            raise DefinitionError(
                f"tool '{name}': separator must be letters, digits or _.- (e.g. '_'); "
                f"got {separator!r}"
            )
        if isinstance(requires, str) or not all(isinstance(s, str) and s for s in requires):
            raise DefinitionError(f"tool '{name}': requires is a set of scope names")
        if not isinstance(instructions, str):
            raise DefinitionError(f"tool '{name}': instructions must be a str")
        self.name = name
        self.title = optional_text(f"tool '{name}'", "title", title)
        """The name a client shows people (MCP ``Tool.title``); the agent reads ``name``."""
        self.icons = icons_of(f"tool '{name}'", icons)
        self.requires = frozenset(requires)
        """The scopes an action needs when it does not say (``requires=`` on the action)."""
        self.description = description.strip()
        self.instructions = instructions.strip()
        self.exposition: Exposition = exposition
        self.separator = separator
        self.split_names = _split_names(name, exposition, separator, split_names)
        self._app = app
        self._actions: dict[str, Action] = {}
        self._groups: dict[str, Group] = {}
        self._group_of: dict[str, Group] = {}  # action name -> its group
        # Only a tool listing an action argument unites its actions' parameters, so only it
        # can have conflicts.
        self._param_types = ParamTypes(name) if exposition != "flat" else None
        self._select = False
        self._toon = False
        self._listing = Listing()

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, actions={list(self._actions)})"

    # -- enabled at run time ---------------------------------------------------------------

    def enabled_for(self, tenant: str | None) -> bool:
        """Whether callers acting for ``tenant`` (``None``: for none) see and call it."""
        return self._listing.enabled_for(tenant)

    async def enable(self, *, tenant: str | None = None) -> None:
        """Lists the tool again, for everyone or for one tenant's callers; connected clients
        are told their tool list changed (``notifications/tools/list_changed``)."""
        await self._switch(True, tenant)

    async def disable(self, *, tenant: str | None = None) -> None:
        """Stops listing the tool, for everyone or for one tenant's callers; calling it is
        then ``UNKNOWN_TOOL``. Connected clients are told their tool list changed."""
        await self._switch(False, tenant)

    async def _switch(self, enabled: bool, tenant: str | None) -> None:
        if self._listing.switch(enabled, tenant):
            await self._app._catalog_changed(tenant)

    @property
    def actions(self) -> Mapping[str, Action]:
        """The actions, by name, in definition order."""
        return MappingProxyType(self._actions)

    @property
    def groups(self) -> Mapping[str, Group]:
        """The action groups, by name, in definition order."""
        return MappingProxyType(self._groups)

    @property
    def listed_names(self) -> tuple[str, ...]:
        """The names this tool is listed under, known without building any schema.

        A split tool claims both of its names when it is created, listed or not yet.
        """
        if self.exposition == "flat":
            return tuple(self.flat_name(name) for name in self._actions)
        if self.split_names is not None:
            return self.split_names
        return (self.name,)

    def listed_name(self, action: Action) -> str:
        """The MCP tool that lists ``action``: the tool, its flat name, or a split half."""
        if self.exposition == "flat":
            return self.flat_name(action.name)
        if self.split_names is not None:
            return self.split_names[0 if action.read_only else 1]
        return self.name

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
        if action.declared is not None and self.exposition != "flat":
            raise DefinitionError(
                f"tool '{self.name}': action '{action.name}' declares input_schema, which only "
                "a flat tool advertises as given (a grouped tool unites its actions' "
                'parameters); use exposition="flat"'
            )
        flat = [self.flat_name(action.name)] if self.exposition == "flat" else []
        self._app._defining(self, [])
        if self._param_types is not None:
            self._param_types.add(action)
        self._app._defining(self, flat)  # last: a listed name is taken for good
        self._actions[action.name] = action

    def group(self, name: str, *, description: str = "") -> ActionGroup:
        """Starts a group of actions named ``{name}.{action}``, described together.

        Example::

            admin = issues.group("admin", description="Maintenance; needs an admin token.")

            @admin.action(destructive=True)
            def purge() -> None: ...  # the action "admin.purge"

        Raises:
            DefinitionError: on a bad or repeated name, or a description that is not a str.
        """
        if not isinstance(name, str) or not _GROUP_NAME.fullmatch(name):
            raise DefinitionError(
                f"tool '{self.name}': group name {name!r} must be letters, digits, _ or -"
            )
        if name in self._groups:
            raise DefinitionError(f"tool '{self.name}' already has a group '{name}'")
        if not isinstance(description, str):
            raise DefinitionError(f"tool '{self.name}': group description must be a str")
        self._app._defining(self, [])
        self._groups[name] = Group(name, fold_lines(description).strip())
        return ActionGroup(self, self._groups[name])

    def group_of(self, action: str) -> Group | None:
        """The group ``action`` was defined in, if any."""
        return self._group_of.get(action)

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


def _split_names(
    name: str, exposition: Exposition, separator: str, names: tuple[str, str] | None
) -> tuple[str, str] | None:
    """The two names of a split tool: its read-only actions' tool, then the others'."""
    if exposition != "split":
        if names is not None:
            raise DefinitionError(f"tool '{name}': split_names= applies to exposition='split'")
        return None
    if names is None:
        return (name, f"{name}{separator}write")
    if (
        not isinstance(names, tuple)
        or len(names) != 2
        or not all(isinstance(n, str) and NAME_PATTERN.fullmatch(n) for n in names)
        or names[0] == names[1]
    ):
        raise DefinitionError(
            f"tool '{name}': split_names takes two different tool names (1-64 letters, "
            f"digits or _.-), read-only first; got {names!r}"
        )
    return names
