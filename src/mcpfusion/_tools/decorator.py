"""Declaring a tool's actions: the ``@tool.action`` decorator and action groups."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, overload

from mcpfusion._present.style import Style
from mcpfusion._tools.action import Action
from mcpfusion._tools.client import Feature
from mcpfusion._tools.client_needs import Confirm
from mcpfusion._tools.definition import TaskBegins, TaskMode
from mcpfusion._tools.schema import DISCRIMINATOR
from mcpfusion._tools.views import Returns

F = TypeVar("F", bound=Callable[..., Any])


class Defaults(Protocol):
    """What an action takes from its app when it is declared."""

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


@dataclass(frozen=True, slots=True)
class Group:
    """A named group of a tool's actions (``tool.group("admin", ...)``): ``admin.reset``.

    Attributes:
        name: the prefix of its actions' names.
        description: what its actions are for, shown in the tool description.
    """

    name: str
    description: str


class ActionDecorator:
    """``Tool``'s base: the ``action`` decorator, which builds an ``Action`` from a handler
    and its options and hands it to ``add``.

    ``Tool`` sets the attributes declared here and defines ``add``.
    """

    # Set by Tool.__init__; ``exposition`` is its Exposition there, read here as "flat" or not.
    name: str
    requires: frozenset[str]
    exposition: str
    _app: Defaults
    _group_of: dict[str, Group]

    def add(self, action: Action) -> None:
        """Adds a built action (``Tool.add``)."""
        raise NotImplementedError

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


class ActionGroup:
    """Declares actions of one group: ``@admin.action`` defines ``admin.{name}`` on the tool."""

    __slots__ = ("_group", "_tool")

    def __init__(self, tool: ActionDecorator, group: Group) -> None:
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


def _docstring_summary(handler: Callable[..., Any]) -> str:
    """The first paragraph of a handler's docstring, on one line."""
    if not (inspect.isfunction(handler) or inspect.ismethod(handler)):
        return ""  # a partial's or an object's docstring describes its class, not the action
    doc = inspect.getdoc(handler) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())
