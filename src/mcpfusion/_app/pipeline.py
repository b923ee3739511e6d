"""The call pipeline: every request's run over a frozen catalog, middleware chain included."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, Protocol

from pydantic import ValidationError

from mcpfusion._app.answering import Answering, Capped, given
from mcpfusion._app.concurrency import Running
from mcpfusion._app.exposure import Progressive
from mcpfusion._app.lifespan import Lifespan
from mcpfusion._app.listing import Listed
from mcpfusion._app.middleware import Call, Middleware, compose
from mcpfusion._app.workflow import Workflow
from mcpfusion._identity import Identity, scopes_of
from mcpfusion._present.failures import (
    forbidden,
    from_exception,
    missing_discriminator,
    no_view,
    unknown_action,
    unknown_tool,
    validation_failure,
)
from mcpfusion._present.paging import Pager
from mcpfusion._present.response import ToolResponse
from mcpfusion._surface.outcome import Outcome
from mcpfusion._tools.action import Action
from mcpfusion._tools.catalog import Catalog, Route
from mcpfusion._tools.client import ClientChannel
from mcpfusion._tools.context import (
    NO_META,
    TOOL_CALL,
    Context,
    ContextFactory,
    Progress,
    Request,
    RequestKind,
)
from mcpfusion._tools.cursors import Cursors
from mcpfusion._tools.declared import InvalidArguments
from mcpfusion._tools.schema import CURSOR, DISCRIMINATOR, SELECT
from mcpfusion._tools.validation import (
    arguments_problem,
    cursor_problem,
    field_problems,
    select_problems,
)

_ABSENT: Any = object()  # no ``action`` argument at all (``null`` is a wrong one)


class Toggles(Capped, Protocol):
    """What the pipeline reads of its app at run time: whether a tool was toggled, its
    workflow and concurrency limits, and where caller state lives (and ``Capped``)."""

    exposure: Progressive | None
    toggled: bool
    workflow: Workflow | None
    _running: Running
    _cursors: Cursors

    def _bind_caller_store(self) -> None:
        """Makes the app's caller store the current call's (``ctx.caller_state``)."""
        ...

    async def _catalog_changed(self, tenant: str | None, listed: Listed = "tools") -> None:
        """Tells whoever serves the app that what ``tenant`` (or everyone) sees changed."""
        ...


class Pipeline(Answering):
    """How the app answers: built when its catalog freezes, one per catalog.

    A ``tools/call`` runs these steps, in order:

    1. ``call_tool`` routes the listed name to its route and action;
    2. ``admit`` checks the caller's scopes, then the arguments: a refusal becomes the
       call's ``rejection``, which middleware still sees;
    3. ``dispatch``, the one entry of every request kind (``Surface`` sends resource
       reads, prompts and completions here), runs the middleware chain;
    4. ``endpoint``, the chain's innermost step, hands the call to ``answer``;
    5. ``answer`` builds the context, runs the handler within its timeout and sends its
       value (or leaves a resource's, prompt's or completion's result in its ``Outcome``).

    Steps 2-4 are plain functions handing back the next step's awaitable: one coroutine
    frame less each (``benchmarks/call.py``).

    Args:
        catalog: what the app serves, built once.
        middleware: the app's middleware, composed here once, first added first.
        lifespan: where each call reads the app's state.
        factory: the app's context factory, used unless a call brings its own.
        app: the app, read for ``toggled`` (a tool enabled or disabled at run time).
    """

    __slots__ = ("_app", "_chain", "_factory", "_lifespan", "catalog")

    _app: Toggles

    def __init__(
        self,
        catalog: Catalog,
        middleware: Sequence[Middleware],
        lifespan: Lifespan,
        factory: ContextFactory,
        app: Toggles,
    ) -> None:
        self.catalog = catalog
        self._lifespan = lifespan
        self._factory = factory
        self._app = app
        self._chain = compose(middleware, self.endpoint) if middleware else None

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        progress: Progress | None,
        meta: Mapping[str, Any] | None,
        context: ContextFactory | None,
        identity: Identity | None,
        client: ClientChannel | None,
    ) -> tuple[Awaitable[ToolResponse], Route | None]:
        """Step 1: routes one ``tools/call``; hands back the rest of it (``Fusion.call_tool``
        awaits it): ``admit``'s steps, within the workflow gate and concurrency limits when
        the app or the action has them (``guarded``); and the route the response's targets
        are still to be checked against, after the middleware chain (else ``None``)."""
        catalog = self.catalog
        toggled = self._app.toggled
        route = catalog.routes.get(name)
        if route is None or (toggled and not route.tool.enabled_for(tenant_of(identity))):
            visible = catalog.visible_names(scopes_of(identity))
            if toggled:
                tenant = tenant_of(identity)
                routes = catalog.routes
                visible = [n for n in visible if routes[n].tool.enabled_for(tenant)]
            return given(unknown_tool(name, visible)), None
        tool, action = route.tool, route.action
        # type() first: Mapping is an ABC, whose isinstance costs 0.2 µs.
        if type(arguments) is not dict and not isinstance(arguments, Mapping | None):
            target = f"{tool.name}/{action.name}" if action else tool.name
            return given(validation_failure(target, [arguments_problem(arguments)])), None
        args = dict(arguments) if arguments else {}
        if action is None:
            chosen = args.pop(DISCRIMINATOR, _ABSENT)
            action = route.actions.get(chosen) if isinstance(chosen, str) else None
            if action is None:  # what the caller may call is worked out for errors only
                scopes = scopes_of(identity)
                visible = catalog.visible_actions(route, scopes)
                if chosen is _ABSENT:
                    return given(missing_discriminator(route.name, visible)), None
                elsewhere = catalog.visible_elsewhere(route, scopes)
                return given(unknown_action(route.name, chosen, visible, elsewhere)), None
        factory = context or self._factory
        meta = meta or NO_META
        app = self._app
        if (
            app.workflow is None
            and app.exposure is None
            and action.concurrency is None
            and not (action.destructive and app._running.serialize_destructive)
        ):  # the common call: its response's targets are checked where it is made, or
            # with middleware after the chain, in the caller's frame: a coroutine less
            if self._chain is None:
                return self.admit(
                    route, action, args, factory, identity, meta, progress, client, route
                ), None
            return self.admit(route, action, args, factory, identity, meta, progress, client), route
        return self.guarded(route, action, args, factory, identity, meta, progress, client), None

    async def guarded(
        self,
        route: Route,
        action: Action,
        args: dict[str, Any],
        factory: ContextFactory,
        identity: Identity | None,
        meta: Mapping[str, Any],
        progress: Progress | None,
        client: ClientChannel | None,
    ) -> ToolResponse:
        """Step 1's end for a call with a workflow or a concurrency limit: the workflow gate
        one step before the handler and one transition after a success, and the calls of
        an action limited to ``concurrency=`` (destructive ones one at a time per caller)."""
        app = self._app
        app._bind_caller_store()  # the workflow and exposure keep their state there
        flow = app.workflow
        if flow is not None:
            refused = await flow.refuse(action.tool, action.name, identity, meta)
            if refused is not None:
                return refused
        exposure = app.exposure
        # A tool called before it was listed is answered, and listed from now on: the
        # model knew its name, and refusing would only cost a round trip.
        if exposure is not None and await exposure.called(route.name, identity, meta):
            await app._catalog_changed(tenant_of(identity))
        running = app._running
        if action.concurrency is None and not (
            action.destructive and running.serialize_destructive
        ):
            response = await self.admit(
                route, action, args, factory, identity, meta, progress, client
            )
        else:
            refused, caller = running.enter(action, identity, meta)
            if refused is not None:
                return refused
            try:
                response = await self.admit(
                    route, action, args, factory, identity, meta, progress, client
                )
            finally:
                running.leave(action, caller)
        if flow is not None and not response.is_error:
            trigger = f"{action.tool}.{action.name}"
            response, moved = await flow.after_success(response, route, trigger, identity, meta)
            if moved:
                await app._catalog_changed(tenant_of(identity))
        return self.catalog.targets.checked(response, route)

    def admit(
        self,
        route: Route,
        action: Action,
        args: dict[str, Any],
        factory: ContextFactory,
        identity: Identity | None,
        meta: Mapping[str, Any],
        progress: Progress | None,
        client: ClientChannel | None,
        checked: Route | None = None,
    ) -> Awaitable[ToolResponse]:
        """Step 2: checks the scopes and the arguments; hands back the rest of the call.

        ``checked``: the route whose targets the response is checked against, when the
        caller awaits nothing after it (``call_tool``'s common call).
        """
        rejection: ToolResponse | None = None
        kwargs: dict[str, Any] = {}
        select: list[str] | None = None
        page: Pager | None = None
        requires = action.requires
        if requires and not requires <= scopes_of(identity):  # a subset test allocates nothing
            # Before validation: a caller without the scopes learns nothing of the inputs.
            rejection = forbidden(requires - scopes_of(identity))
        elif action.views is not None and action.views.refuses:
            rejection = self._unviewed(action, identity)
        if rejection is None:
            problems = []
            if None in args.values():  # null is absent where a dialect made it nullable
                _drop_nulls(args, action, route)
            if route.select_keys is not None and SELECT in args:
                raw = args.pop(SELECT)
                problems = select_problems(raw, route.select_keys)
                select = None if problems else raw
            cursor = args.pop(CURSOR, None) if action.pages else None
            if cursor is not None and not isinstance(cursor, str):
                problems.append(cursor_problem(cursor))
            try:
                if args or not action.takes_nothing:  # else ``parse`` returns {}: no frame
                    kwargs = action.parse(args)
            except ValidationError as exc:
                accepted = [p.wire for p in action.params]
                if action.pages:
                    accepted.append(CURSOR)
                if route.select_keys is not None:
                    accepted.append(SELECT)
                problems = field_problems(exc, args, accepted) + problems
            except InvalidArguments as exc:  # a declared input schema (input_schema=)
                problems = exc.problems + problems
            if problems:
                rejection = validation_failure(f"{route.tool.name}/{action.name}", problems)
            elif action.pages:
                page, rejection = self._app._cursors.page(action, args, identity, cursor)
        return self.dispatch(
            TOOL_CALL, action.tool, action.name, action, kwargs, identity, meta, client,
            factory, rejection, None, select, progress, checked, page,
        )  # fmt: skip

    @staticmethod
    def _unviewed(action: Action, identity: Identity | None) -> ToolResponse | None:
        """A caller with no Presenter of its own is refused before the handler runs."""
        views = action.views
        if views is None:
            return None
        try:
            if views.pick(identity) is not None:
                return None
        except Exception as exc:  # a selector's own defect fails the call, not the server
            return action.failed(from_exception(exc, action.tool, action.name))
        return no_view(views.scopes)

    def dispatch(
        self,
        kind: RequestKind,
        name: str,
        step: str,
        action: Action,
        kwargs: dict[str, Any],
        identity: Identity | None,
        meta: Mapping[str, Any],
        client: ClientChannel | None,
        factory: ContextFactory | None,
        rejection: ToolResponse | None,
        outcome: Outcome[Any] | None,
        select: list[str] | None = None,
        progress: Progress | None = None,
        checked: Route | None = None,
        page: Pager | None = None,
    ) -> Awaitable[ToolResponse]:
        """Step 3, every request kind's one entry: the middleware chain, then the handler.

        ``outcome`` is where a resource read, prompt or completion leaves its result
        (``None`` for ``tools/call``, whose result is the response). With ``checked``
        (given only without middleware: ``Fusion.call_tool`` checks a chain's response),
        the response's targets are checked against that route; ``page`` is the page a
        call of a paging action asks for.
        """
        factory = factory or self._factory
        if self._chain is None:
            if rejection is not None:
                if checked is not None:
                    rejection = self.catalog.targets.checked(rejection, checked)
                return given(rejection)
            request = None
            if (  # ``_reads_request``, without its frame
                not action.without_request
                or factory is not Context
                or (action.presenter is not None and action.presenter.uses_context)
            ):
                # Only a context reads the caller store (``ctx.caller_state``): a call
                # without one binds nothing (0.2 µs of ``benchmarks/call.py``'s trivial).
                self._app._bind_caller_store()
                request = Request(
                    name, step, meta, progress, identity, self._lifespan.state,
                    client=client, page=page, style=action.style,
                )  # fmt: skip
            return self.answer(
                action, kwargs, select, request, factory, None, outcome, checked, page
            )
        self._app._bind_caller_store()  # middleware may build a context from call.request
        call = Call(
            name, step, kwargs, identity, meta, self._lifespan.state, progress, client, rejection,
            action, kwargs, select, factory, outcome, kind, page,
        )  # fmt: skip
        return self._chain(call)

    def checked(self, response: ToolResponse) -> ToolResponse:
        """A resource's or prompt's response with its suggestion targets checked and
        spelled as the catalog lists them, as a tool's are."""
        return self.catalog.targets.checked(response, None)


def _drop_nulls(args: dict[str, Any], action: Action, route: Route) -> None:
    """Drops each ``null`` that means "absent": ``_select``'s, an optional parameter's
    whose type takes no ``null``, and one of a parameter only other actions of the listed
    tool take. A strict schema dialect (``_dialects``) makes them nullable, as every
    property is then required; ``null`` anywhere else is still validated as sent.
    """
    for name in [name for name, value in args.items() if value is None]:
        if (
            name == SELECT
            or name in action.null_absent
            or (name not in action.wires and any(name in a.wires for a in route.actions.values()))
        ):
            del args[name]


def tenant_of(identity: Identity | None) -> str | None:
    """The tenant a caller acts for, if any."""
    return identity.tenant if identity is not None else None
