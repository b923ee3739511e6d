"""A tool: a named group of actions, as its app's code defines it."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal, Protocol, Self, TypeVar, overload

from mcpfusion._errors import DefinitionError
from mcpfusion._present.style import Style
from mcpfusion._tools.action import Action
from mcpfusion._tools.client import Feature
from mcpfusion._tools.client_needs import Confirm
from mcpfusion._tools.definition import NAME_PATTERN, TaskBegins, TaskMode
from mcpfusion._tools.icon import Icon, icons_of, optional_text
from mcpfusion._tools.listing import Listing
from mcpfusion._tools.schema import DISCRIMINATOR, ParamTypes
from mcpfusion._tools.views import Returns
from mcpfusion._wire.format import fold_lines

Exposition = Literal["grouped", "flat", "split"]
EXPOSITIONS: Final[tuple[Exposition, ...]] = ("grouped", "flat", "split")

F = TypeVar("F", bound=Callable[..., Any])

_GROUP_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,32}")


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

    @property
    def style(self) -> Style:
        """The app's defaults for how responses are written."""
        ...

    def _defining(self, tool: Tool, listed: Sequence[str]) -> None:
        """Checks that the app still takes definitions and that ``listed`` names are free."""
        ...

    async def _catalog_changed(self, tenant: str | None) -> None:
        """Tells whoever serves the app that what ``tenant`` (or everyone) sees changed."""
        ...


@dataclass(frozen=True, slots=True)
class Group:
    """A named group of a tool's actions (``tool.group("admin", ...)``): ``admin.reset``.

    Attributes:
        name: the prefix of its actions' names.
        description: what its actions are for, shown in the tool description.
    """

    name: str
    description: str


class Tool:
    """A named group of actions, listed as one MCP tool (grouped), one per action (flat), or
    two: the read-only actions and the others (split).

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

    @overload
    def action(self, name: F, /) -> F: ...

    @overload
    def action(
        self,
        name: str | None = None,
        /,
        *,
        description: str | None = None,
        returns: Returns = None,
        output_schema: Any = None,
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
        requires: Collection[str] | None = None,
        timeout: float | None = None,
        concurrency: int | None = None,
        loggable: Collection[str] = (),
        stale: bool = False,
        fresh_for: float | None = None,
        invalidates: Collection[str] = (),
        confirm: bool | str | Confirm | None = None,
        requires_client: Collection[Feature] = (),
        input_schema: Mapping[str, Any] | None = None,
        open_world: bool | None = None,
        max_bytes: int | None = None,
        paging: bool = False,
        task: TaskMode = "never",
        task_begins: TaskBegins = "call",
    ) -> Callable[[F], F]: ...

    def action(
        self,
        name: str | Callable[..., Any] | None = None,
        /,
        *,
        description: str | None = None,
        returns: Returns = None,
        output_schema: Any = None,
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
        requires: Collection[str] | None = None,
        timeout: float | None = None,
        concurrency: int | None = None,
        loggable: Collection[str] = (),
        stale: bool = False,
        fresh_for: float | None = None,
        invalidates: Collection[str] = (),
        confirm: bool | str | Confirm | None = None,
        requires_client: Collection[Feature] = (),
        input_schema: Mapping[str, Any] | None = None,
        open_world: bool | None = None,
        max_bytes: int | None = None,
        paging: bool = False,
        task: TaskMode = "never",
        task_begins: TaskBegins = "call",
    ) -> Any:
        """Declares an action; use as ``@tool.action`` or ``@tool.action("name", ...)``.

        Args:
            name: the action's name; the function's name by default.
            description: what the action does; the docstring's first paragraph by default.
            returns: the Presenter that renders the handler's data; or one per caller: a
                mapping of scopes to Presenters (the first scope the caller holds picks,
                ``"*"`` serves the rest) or a function of the caller's ``Identity``
                returning its Presenter (``None`` refuses the caller: ``FORBIDDEN``).
            output_schema: a pydantic model the data must fit, sent as structured output.
            read_only: the action changes nothing.
            destructive: the action deletes or overwrites something.
            idempotent: repeating the call has no further effect.
            requires: the scopes a caller needs to see and call it (the tool's
                ``requires=`` by default); a caller without them does not find it in
                ``tools/list`` and gets ``FORBIDDEN`` if it calls it anyway.
            timeout: seconds the handler may run; past them it is cancelled and the agent
                gets ``TIMEOUT``.
            concurrency: how many calls of it may run at once in this process; one more
                gets ``BUSY`` with ``retry_after`` (``None``: no limit).
            loggable: parameter names whose values an audit log may record (none by
                default: arguments can hold personal data).
            stale: what it returns is stale as soon as it is read: agents should call it
                again rather than reuse an earlier result (SPEC §15).
            fresh_for: seconds its result stays current (SPEC §15).
            invalidates: state-name patterns a successful call makes stale, e.g.
                ``["billing.*", "reports.revenue"]`` (SPEC §15).
            confirm: ask the user before running it: ``True``, a message (``{name}``
                placeholders take the arguments) or a ``Confirm`` (which also says what
                to do when the client cannot ask).
            requires_client: client features it cannot run without (``"elicitation"``,
                ``"sampling"``, ``"roots"``): a client without them gets
                ``UNSUPPORTED_BY_CLIENT``.
            input_schema: the input schema as a JSON Schema dict (Draft 2020-12), for
                inputs a signature cannot describe (``allOf``/``anyOf``, ``if``/``then``/
                ``else``): advertised as given and enforced with a JSON Schema validator;
                each handler parameter receives the argument of its name as sent. Flat
                tools only.
            open_world: it reaches beyond the server (the web, a third party's API):
                sent as ``openWorldHint``, which a tool has when any of its actions does;
                ``None`` (the default) sends no hint.
            max_bytes: the most UTF-8 bytes of text its answer may send (the app's
                ``max_bytes`` by default): over it, UI blocks and then rows are left out
                and the answer says so (SPEC §17).
            paging: let the agent page through the list its Presenter (``returns=``, with
                a ``limit``: the rows of one page) cuts: it accepts ``_cursor``, and a cut
                list says how to ask for the next page (SPEC §5.4).
            task: whether a call runs as an MCP task (SEP-2663, docs/tasks.md) when the
                client negotiated the tasks extension: ``"never"`` (the default: the call
                answers in its own request), ``"optional"`` (a task for such a client,
                in-request for the others) or ``"always"`` (a task; a client without the
                extension is refused with ``-32021``).
            task_begins: when such a call becomes a task: ``"call"`` (the default: as it
                starts) or ``"handler"`` (it runs in its own request, asking its
                questions in rounds, until the handler calls ``ctx.continue_as_task()``).

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
                reserved=(DISCRIMINATOR,) if self.exposition != "flat" else (),
                requires=self.requires if requires is None else requires,
                timeout=timeout,
                concurrency=concurrency,
                loggable=loggable,
                state_type=self._app.state_type,
                style=self._app.style,
                stale=stale,
                fresh_for=fresh_for,
                invalidates=invalidates,
                confirm=confirm,
                requires_client=requires_client,
                input_schema=input_schema,
                open_world=open_world,
                max_bytes=max_bytes,
                paging=paging,
                task=task,
                task_begins=task_begins,
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


class ActionGroup:
    """Declares actions of one group: ``@admin.action`` defines ``admin.{name}`` on the tool."""

    __slots__ = ("_group", "_tool")

    def __init__(self, tool: Tool, group: Group) -> None:
        self._tool = tool
        self._group = group

    @property
    def name(self) -> str:
        """The group's name, the prefix of its actions' names."""
        return self._group.name

    @overload
    def action(self, name: F, /) -> F: ...

    @overload
    def action(self, name: str | None = None, /, **options: Any) -> Callable[[F], F]: ...

    def action(self, name: str | Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """``Tool.action`` for this group: the action is named ``{group}.{name}``."""
        if callable(name):
            return self.action()(name)

        def register(handler: F) -> F:
            short = name if name is not None else getattr(handler, "__name__", "")
            full = f"{self._group.name}.{short}"
            self._tool.action(full, **options)(handler)
            self._tool._group_of[full] = self._group
            return handler

        return register


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


def _docstring_summary(handler: Callable[..., Any]) -> str:
    """The first paragraph of a handler's docstring, on one line."""
    if not (inspect.isfunction(handler) or inspect.ismethod(handler)):
        return ""  # a partial's or an object's docstring describes its class, not the action
    doc = inspect.getdoc(handler) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())
