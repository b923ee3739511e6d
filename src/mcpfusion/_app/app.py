"""The application: its tools, the catalog it serves, and the one request pipeline."""

from __future__ import annotations

import inspect
import logging
import typing
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import anyio
from pydantic import ValidationError

from mcpfusion._app.lifespan import Lifespan, LifespanFactory, state_type
from mcpfusion._app.middleware import Call, Middleware, Next, check_middleware, compose
from mcpfusion._errors import DefinitionError
from mcpfusion._identity import Identity, scopes_of
from mcpfusion._present.failures import (
    forbidden,
    from_exception,
    missing_discriminator,
    timed_out,
    unknown_action,
    unknown_tool,
    validation_failure,
)
from mcpfusion._present.presenter import Presenter
from mcpfusion._present.response import ToolResponse, view_of
from mcpfusion._present.statesync import unmatched, with_invalidation
from mcpfusion._present.style import MODEL_DEFAULT, Audience, Style
from mcpfusion._renderer import APP_MIME_TYPE
from mcpfusion._surface.prompt import Prompt
from mcpfusion._surface.resource import CacheScope, Resource
from mcpfusion._surface.surface import Outcome, Surface
from mcpfusion._surface.ui_app import (
    APP_META,
    DEFAULT_URI,
    SCRIPT_MIME,
    diagram_library,
    emits_ui,
    parts_template,
    point_tools,
    renderer,
)
from mcpfusion._tools.action import Action
from mcpfusion._tools.catalog import DEFINITIONS, Catalog, Definitions, Route
from mcpfusion._tools.client import ClientChannel, ClientLacks, InputNeeded, before_running
from mcpfusion._tools.context import (
    NO_META,
    TOOL_CALL,
    Context,
    ContextFactory,
    Progress,
    Request,
    RequestKind,
)
from mcpfusion._tools.declared import InvalidArguments
from mcpfusion._tools.listing import Listing
from mcpfusion._tools.schema import DISCRIMINATOR, SELECT
from mcpfusion._tools.tool import Exposition, Tool
from mcpfusion._tools.validation import arguments_problem, field_problems, select_problems
from mcpfusion._wire.datablock import DataFormat, Delimiter

if TYPE_CHECKING:
    from starlette.applications import Starlette

    # For run()'s annotations only: serving sits above the app, and run() reaches it
    # through this public façade (its one import of the serving side).
    from mcpfusion.server import HttpOptions

logger = logging.getLogger("mcpfusion")


_ABSENT: Any = object()  # no ``action`` argument at all (``null`` is a wrong one)


class Fusion:
    """An MCP server's application: its name, its tools and how each call is answered.

    Example::

        app = Fusion("billing-server", version="1.0.0")
        billing = app.tool("billing", description="Invoices and payments.")

    Args:
        name: the server name announced to clients.
        version: the server version announced to clients.
        instructions: optional instructions for the client's model.
        context: a factory called with the ``Request`` of each call, after validation;
            handlers and Presenter callbacks receive what it returns. ``Context`` by
            default; it may be a ``Context`` subclass, or return an awaitable.
        lifespan: called with the app, an async context manager run once per server
            process around serving (``contextlib.asynccontextmanager``); what it yields is
            the app's state, ``ctx.state`` in every call, and handlers receive it by
            annotating a parameter with its type (the one its return annotation names).
        local_identity: the caller over stdio and for ``mcpfusion call``: the process
            owner, whom a local transport cannot tell from anyone else. ``None``
            (anonymous) by default, which cannot call actions that require scopes.
        data_format: the data format of Presenters that choose none, and of plain values
            handlers return: ``"toon"`` (default), ``"compact"`` or ``"json"`` (indented).
        delimiter: the TOON delimiter there: ``"|"`` (default), ``","`` or ``"\t"``.
        ui_audience: ``"user"`` (default) sends Presenters' UI blocks for the user's eyes
            only (``audience: ["user"]``), ``"all"`` for the model too, unless a Presenter
            says otherwise.
        definitions: ``"lean"`` (default): tool definitions without what costs tokens and
            tells the model nothing new (``_lean``), or ``"full"``.

    Define, then serve: ``list_tools()`` and ``call_tool()`` read a catalog of what the app
    serves, built once from its tools (again only if a definition changes it); serving the
    app freezes it, and so does ``freeze()``: defining anything after that raises.
    The server's seam is ``name``, ``version``, ``instructions``, ``list_tools()`` and
    ``call_tool()``; the core never imports the MCP SDK.
    """

    def __init__(
        self,
        name: str,
        *,
        version: str = "0.1.0",
        instructions: str | None = None,
        context: ContextFactory | None = None,
        lifespan: LifespanFactory | None = None,
        local_identity: Identity | None = None,
        data_format: DataFormat | None = None,
        delimiter: Delimiter | None = None,
        ui_audience: Audience | None = None,
        definitions: Definitions = "lean",
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise DefinitionError("a Fusion app needs a non-empty name")
        if not isinstance(version, str) or not version:
            raise DefinitionError(f"app '{name}': version must be a non-empty str")
        if instructions is not None and not isinstance(instructions, str):
            raise DefinitionError(f"app '{name}': instructions must be a str or None")
        if context is not None and not callable(context):
            raise DefinitionError(f"app '{name}': context must be a callable factory")
        if lifespan is not None and not callable(lifespan):
            raise DefinitionError(f"app '{name}': lifespan must be callable (app) -> context")
        if local_identity is not None and not isinstance(local_identity, Identity):
            raise DefinitionError(f"app '{name}': local_identity must be an Identity or None")
        if definitions not in DEFINITIONS:
            raise DefinitionError(f"app '{name}': definitions must be one of {DEFINITIONS}")
        try:
            self._style = Style(data_format, delimiter, ui_audience).over(MODEL_DEFAULT)
        except DefinitionError as exc:
            raise DefinitionError(f"app '{name}': {exc}") from None
        self.definitions: Definitions = definitions
        self.name = name
        self.version = version
        self.instructions = instructions
        self._factory: ContextFactory = context or Context
        self._context_type = _product_type(self._factory)
        self._tools: dict[str, Tool] = {}
        self._listed: dict[str, Tool] = {}  # listed MCP name -> its tool, as tools are defined
        self._catalog: Catalog | None = None
        self._is_frozen = False
        self.local_identity = local_identity
        self._lifespan = Lifespan(lifespan, self)
        self._state_type = state_type(lifespan)
        self._middleware: list[Middleware] = []
        self._chain: Next | None = None
        self.surface = Surface(self)
        """The app's resources, prompts and completions (``resource``, ``prompt``)."""
        self.ui_app_uri: str | None = None
        """The ``ui://`` URI of the MCP App rendering UI blocks (``enable_ui_app``), if any."""
        self._announcers: list[Announcer] = []
        self.toggled = False
        """Whether a tool was enabled or disabled at run time (``Tool.enable``)."""

    def __repr__(self) -> str:
        return f"Fusion({self.name!r}, tools={list(self._tools)})"

    def tool(
        self,
        name: str,
        *,
        description: str = "",
        exposition: Exposition = "grouped",
        separator: str = "_",
        requires: Collection[str] = (),
        instructions: str = "",
        split_names: tuple[str, str] | None = None,
        enabled: bool = True,
    ) -> Tool:
        """Creates a tool; declare its actions with ``@tool.action(...)``.

        Args:
            name: the MCP tool name (grouped) or the prefix of each action's (flat).
            description: what the tool is for; the first line of its description.
            exposition: ``"grouped"`` (one MCP tool with an ``action`` argument),
                ``"flat"`` (one MCP tool per action, named ``{tool}{separator}{action}``)
                or ``"split"`` (two grouped tools: the read-only actions, and the others).
            separator: joins tool and action names in flat exposition (and the default
                name of a split tool's second half, ``{tool}{separator}write``).
            instructions: how to use the tool, appended to its description.
            split_names: the two names of a split tool, read-only first.
            requires: the scopes each action needs unless it says otherwise.
            enabled: ``False`` defines it hidden until ``await tool.enable()`` (for
                everyone, or ``tenant=`` one tenant's callers).

        Raises:
            DefinitionError: on a duplicate or disallowed name, a name another tool already
                lists, or a bad option.
        """
        if name in self._tools:
            raise DefinitionError(f"app '{self.name}' already has a tool '{name}'")
        tool = Tool(
            self,
            name,
            description=description,
            exposition=exposition,
            separator=separator,
            requires=requires,
            instructions=instructions,
            split_names=split_names,
        )
        self._defining(tool, tool.listed_names)
        self._tools[name] = tool
        if not enabled:
            tool._listing = Listing(False)
            self.toggled = True
        return tool

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The tools, by name, in definition order."""
        return MappingProxyType(self._tools)

    @property
    def context_type(self) -> type | None:
        """The class the context factory returns, when it says so (for parameter injection)."""
        return self._context_type

    @property
    def state_type(self) -> type | None:
        """The class of the app's state, as its lifespan's return annotation names it."""
        return self._state_type

    def middleware(self, middleware: Middleware) -> Middleware:
        """Adds a middleware around every call; use as ``@app.middleware`` or a call.

        A middleware is an async function ``(call, call_next)``: it sees the ``Call`` (the
        identity, tool, action and validated arguments), may change its identity or add
        ``call.values`` for the handler, and either returns ``await call_next(call)``
        (observing the response and the time it took) or short-circuits by raising a
        ``ToolError`` or returning a response of its own. The first added runs first; the
        chain is composed once, when the catalog is built.

        Raises:
            DefinitionError: if it is not an async function of two arguments, or the app
                is frozen.
        """
        checked = check_middleware(middleware)
        self._defining_anything()
        self._middleware.append(checked)
        return middleware

    @property
    def style(self) -> Style:
        """How responses are written where a Presenter (or a plain value) leaves it open."""
        return self._style

    def running(self) -> AbstractAsyncContextManager[Any]:
        """Runs the app's lifespan: ``async with app.running() as state: ...``.

        Serving and ``FusionTester`` enter it; it starts once however many enter it at the
        same time, and shuts down when the last one leaves (also on an error or a
        cancellation). Without a lifespan it yields ``None``.
        """
        return self._lifespan.running()

    def freeze(self) -> None:
        """Fixes what the app serves: the catalog is built now and definitions end here.

        ``run()`` and ``asgi_app()`` freeze the app before serving it.

        Raises:
            DefinitionError: if a tool is incomplete, or on any later definition.
        """
        self._frozen().list_tools()  # an incomplete tool stops the app here
        self._is_frozen = True

    def _frozen(self) -> Catalog:
        if self._catalog is None:
            self._check_invalidations()
            self._catalog = Catalog.build(self._tools.values(), lean=self.definitions == "lean")
            self._chain = compose(self._middleware, self._endpoint) if self._middleware else None
        return self._catalog

    def state_names(self) -> list[str]:
        """Every state name the app serves (SPEC §15): ``{tool}.{action}`` per action, and
        ``{scheme}.{name}`` per resource."""
        names = [a.state_name for tool in self._tools.values() for a in tool.actions.values()]
        return names + [r.state_name for r in self.surface.resources.values()]

    def _check_invalidations(self) -> None:
        """SPEC §15: every ``invalidates`` pattern names some state the app serves.

        Raises:
            DefinitionError: naming the action, its patterns that match nothing, and the
                known state names.
        """
        names = self.state_names()
        for tool in self._tools.values():
            for action in tool.actions.values():
                missing = unmatched(action.invalidates, names)
                if missing:
                    raise DefinitionError(
                        f"{action.tool}/{action.name}: invalidates {', '.join(map(repr, missing))}"
                        f", which matches no state of app '{self.name}'; state names: "
                        f"{', '.join(names)}"
                    )

    def scope_key(self, identity: Identity | None) -> frozenset[str] | None:
        """The scopes of ``identity`` that change what it may call, ``None`` if it may call all.

        A key for caching what each caller sees: ``list_tools(scope_key(identity))`` is
        the caller's ``tools/list``.
        """
        catalog = self._catalog or self._frozen()
        key = scopes_of(identity) & catalog.scopes
        return None if key == catalog.scopes else key

    # -- the catalog at run time ----------------------------------------------------------

    def announce_changes(self, announcer: Announcer) -> None:
        """Registers ``announcer(tenant, listed)``, awaited when a tool (``listed`` is
        ``"tools"``) or a prompt (``"prompts"``) is enabled or disabled, for ``tenant``'s
        callers (everyone's when ``None``); the server adapter tells the clients."""
        self._announcers.append(announcer)

    async def _catalog_changed(self, tenant: str | None, listed: Listed = "tools") -> None:
        if listed == "tools":
            self.toggled = True
        for announcer in list(self._announcers):
            try:
                await announcer(tenant, listed)
            except Exception:
                logger.warning("announcing a catalog change failed", exc_info=True)

    def _shown(self, listed: Sequence[dict[str, Any]], tenant: str | None) -> list[dict[str, Any]]:
        """The tool definitions ``tenant``'s callers see: those of enabled tools."""
        return [t for t in listed if self._listed[t["name"]].enabled_for(tenant)]

    def list_tools(
        self, scopes: Collection[str] | None = None, *, tenant: str | None = None
    ) -> list[dict[str, Any]]:
        """Exactly the MCP ``Tool`` objects of ``tools/list``, as JSON-compatible dicts.

        Args:
            scopes: the caller's scopes: only the actions they allow are listed (a tool
                with none disappears). ``None`` lists everything, as the developer sees it.
            tenant: the tenant the caller acts for: a tool disabled for it (or, for
                ``None``, for everyone) is left out (``Tool.disable``).

        Raises:
            DefinitionError: if a tool is incomplete (no actions, or nothing for
                ``_select`` to pick). The server lists the tools when it is built, so such
                a server refuses to start; ``call_tool`` simply routes around an
                incomplete tool.
        """
        catalog = self._frozen()
        listed = catalog.list_tools(None if scopes is None else frozenset(scopes))
        tools = self._shown(listed, tenant) if self.toggled else listed
        if self.ui_app_uri is not None:
            point_tools(tools, self._shows_ui, self.ui_app_uri)
        return tools

    def _shows_ui(self, listed: str) -> bool:
        """Whether an action the listed tool leads to has a Presenter that can send UI."""
        route = self._frozen().routes[listed]  # a flat route's actions hold its one action
        return any(emits_ui(action.presenter) for action in route.actions.values())

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: Progress | None = None,
        meta: Mapping[str, Any] | None = None,
        context: ContextFactory | None = None,
        identity: Identity | None = None,
        client: ClientChannel | None = None,
    ) -> ToolResponse:
        """Answers one ``tools/call``; every problem the model should read is a result.

        Args:
            name: the MCP tool name.
            arguments: the call's arguments.
            progress: receives ``(done, total, message)`` reports from ``ctx.progress``.
            meta: the request metadata, exposed as ``Request.meta``.
            context: a factory used instead of the app's for this call (tests use it).
            identity: the verified caller, ``None`` for an anonymous one (the server
                passes what the transport established).
            client: the client on the other end (``ctx.log``, ``ctx.elicit``, ...), as
                the server adapter provides it.

        Cancellation (``asyncio.CancelledError``, anyio's cancel scopes) propagates.
        """
        catalog = self._catalog or self._frozen()
        route = catalog.routes.get(name)
        if route is None or (self.toggled and not route.tool.enabled_for(tenant_of(identity))):
            visible = catalog.visible_names(scopes_of(identity))
            if self.toggled:
                tenant = tenant_of(identity)
                visible = [n for n in visible if self._listed[n].enabled_for(tenant)]
            return unknown_tool(name, visible)
        tool, action = route.tool, route.action
        # type() first: Mapping is an ABC, whose isinstance costs 0.2 µs.
        if type(arguments) is not dict and not isinstance(arguments, Mapping | None):
            target = f"{tool.name}/{action.name}" if action else tool.name
            return validation_failure(target, [arguments_problem(arguments)])
        args = dict(arguments) if arguments else {}
        if action is None:
            chosen = args.pop(DISCRIMINATOR, _ABSENT)
            action = route.actions.get(chosen) if isinstance(chosen, str) else None
            if action is None:  # what the caller may call is worked out for errors only
                scopes = scopes_of(identity)
                visible = catalog.visible_actions(route, scopes)
                if chosen is _ABSENT:
                    return missing_discriminator(route.name, visible)
                elsewhere = catalog.visible_elsewhere(route, scopes)
                return unknown_action(route.name, chosen, visible, elsewhere)
        factory = context or self._factory
        response = await self._run(
            route, action, args, factory, identity, meta or NO_META, progress, client
        )
        return catalog.targets.checked(response, route)

    def _run(
        self,
        route: Route,
        action: Action,
        args: dict[str, Any],
        factory: ContextFactory,
        identity: Identity | None,
        meta: Mapping[str, Any],
        progress: Progress | None,
        client: ClientChannel | None,
    ) -> Awaitable[ToolResponse]:
        """Checks the scopes and the arguments; hands back the rest of the call to await.

        A plain function, like ``_endpoint``: a coroutine frame less per call.
        """
        rejection: ToolResponse | None = None
        kwargs: dict[str, Any] = {}
        select: list[str] | None = None
        requires = action.requires
        if requires and not requires <= scopes_of(identity):  # a subset test allocates nothing
            # Before validation: a caller without the scopes learns nothing of the inputs.
            rejection = forbidden(requires - scopes_of(identity))
        else:
            problems = []
            if route.select_keys is not None and SELECT in args:
                raw = args.pop(SELECT)
                problems = select_problems(raw, route.select_keys)
                select = None if problems else raw
            try:
                kwargs = action.parse(args)
            except ValidationError as exc:
                accepted = [p.wire for p in action.params]
                if route.select_keys is not None:
                    accepted.append(SELECT)
                problems = field_problems(exc, args, accepted) + problems
            except InvalidArguments as exc:  # a declared input schema (input_schema=)
                problems = exc.problems + problems
            if problems:
                rejection = validation_failure(f"{route.tool.name}/{action.name}", problems)
        return self._dispatch(
            TOOL_CALL, action.tool, action.name, action, kwargs, identity, meta, client,
            factory, rejection, None, select, progress,
        )  # fmt: skip

    def _dispatch(
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
    ) -> Awaitable[ToolResponse]:
        """The pipeline every request runs through once it names something the app
        serves: the middleware chain, then the handler and its response (``_endpoint``).

        ``outcome`` is where a resource read, prompt or completion leaves its result
        (``None`` for ``tools/call``, whose result is the response).
        """
        if self._catalog is None:
            self._frozen()  # composes the chain: a resource may be read before any call
        factory = factory or self._factory
        state = self._lifespan.state
        if self._chain is None:
            if rejection is not None:
                return _given(rejection)
            request = None
            if _reads_request(action, factory):
                request = Request(name, step, meta, progress, identity, state, client=client)
            return self._answer(action, kwargs, select, request, factory, None, outcome)
        call = Call(
            name,
            step,
            kwargs,
            identity,
            meta,
            state,
            progress,
            client,
            rejection,
            (action, kwargs, select, factory, outcome),
            kind,
        )
        return self._chain(call)

    def _endpoint(self, call: Call) -> Awaitable[ToolResponse]:
        """The innermost step of the middleware chain: the handler and its response.

        A plain function handing back ``_answer``'s coroutine: one frame less per call
        than awaiting it here (0.3 µs of ``benchmarks/call.py``'s ``secured`` case).
        """
        if call._rejection is not None:
            return _given(call._rejection)
        action, kwargs, select, factory, outcome = call._target
        request = call.request if _reads_request(action, factory) else None
        return self._answer(action, kwargs, select, request, factory, call.around_render, outcome)

    async def _answer(
        self,
        action: Action,
        kwargs: dict[str, Any],
        select: list[str] | None,
        request: Request | None,
        factory: ContextFactory,
        around_render: Callable[[], AbstractContextManager[Any]] | None = None,
        outcome: Outcome[Any] | None = None,
    ) -> ToolResponse:
        """Builds the context, runs the handler (within its timeout) and sends its value,
        or, for a resource, prompt or completion, makes its result (``outcome``).

        Without a request (nothing reads it: ``call_tool``), there is no context either.
        """
        try:
            context = None
            if request is not None:
                context = factory(request)
                # A class (the default, Context) never returns an awaitable: skip the check.
                if not isinstance(factory, type) and inspect.isawaitable(context):
                    context = await context
                if action.talks:
                    await before_running(request, kwargs, action.confirm, action.requires_client)
            if action.timeout is None or request is None:  # no request: no timeout either
                value = await action.invoke(kwargs, request, context)
            else:
                with anyio.move_on_after(action.timeout) as scope:
                    value = await action.invoke(kwargs, request, context)
                if scope.cancelled_caught:
                    request.cancel()
                    if outcome is not None:
                        return outcome.timed_out(action.timeout)
                    return timed_out(request.tool, request.action, action.timeout)
            if outcome is not None:
                return await outcome.finished(value, context)
            if around_render is None:
                response = await action.respond(value, context, select)
            else:
                with around_render():
                    response = await action.respond(value, context, select)
            if action.invalidates and not response.is_error and request is not None:
                response = await _invalidated(action, request, response)
            return response
        except (InputNeeded, ClientLacks):
            raise  # a question for a later round, or a protocol-level refusal (_client)
        except Exception as exc:
            if outcome is not None:
                return outcome.failed(exc)
            return action.failed(from_exception(exc, action.tool, action.name))
        except BaseException as exc:
            # Cancellation propagates; anything else a handler or a library in it raises
            # (SystemExit from sys.exit(), KeyboardInterrupt, GeneratorExit) fails this
            # call, not the server.
            if _is_cancellation(exc):
                raise
            if outcome is not None:
                return outcome.failed(exc)
            return action.failed(from_exception(exc, action.tool, action.name))

    def _checked(self, response: ToolResponse) -> ToolResponse:
        """A resource's or prompt's response with its suggestion targets checked and
        spelled as the catalog lists them, as a tool's are."""
        return (self._catalog or self._frozen()).targets.checked(response, None)

    # -- resources and prompts (_surface) --------------------------------------------------

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str = "",
        returns: Presenter | None = None,
        mime_type: str | None = None,
        requires: Collection[str] = (),
        fresh_for: float = 0,
        cache_scope: CacheScope | None = None,
        timeout: float | None = None,
    ) -> Callable[[Callable[..., Any]], Resource]:
        """Defines a resource read by its handler: ``@app.resource("billing://invoices/{id}")``.

        A URI with ``{name}`` variables is a template: the handler's parameters are its
        variables, validated like an action's. What the handler returns is sent like an
        action's value (SPEC §13): through ``returns`` (a Presenter) when given, its blocks
        as the contents in SPEC §2 order, the data block first; ``bytes`` as a blob.

        Args:
            uri: the fixed URI or the URI template.
            name: the name clients show; the handler's name unless given.
            title: a human-readable title.
            description: what it holds; the handler's first docstring line unless given.
            returns: the Presenter its data goes through.
            mime_type: the MIME type it declares (of the data, for a Presenter's).
            requires: the scopes a caller needs to list and read it.
            fresh_for: how many seconds a read stays fresh (SEP-2549 ``ttlMs``).
            cache_scope: ``"public"`` or ``"private"``; private when the handler takes
                the context or the resource requires scopes, unless told.
            timeout: seconds a read (or a completion of its variables) may take before
                it is stopped and the client told so, as an action's ``timeout=``.

        Raises:
            DefinitionError: on a bad URI, parameters that are not its variables, a
                duplicate, or a frozen app.
        """
        self._defining_check()

        def define(handler: Callable[..., Any]) -> Resource:
            self._defining_check()
            return self.surface.add_resource(
                uri,
                handler,
                name=name,
                title=title,
                description=description,
                returns=returns,
                mime_type=mime_type,
                requires=requires,
                fresh_for=fresh_for,
                cache_scope=cache_scope,
                timeout=timeout,
            )

        return define

    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str = "",
        requires: Collection[str] = (),
        enabled: bool = True,
        timeout: float | None = None,
    ) -> Callable[[Callable[..., Any]], Prompt]:
        """Defines a prompt: ``@app.prompt()`` names it after its handler.

        Its arguments are the handler's parameters, validated like an action's; it returns
        a str, messages (``user()``, ``assistant()``) or ``messages_from_view(...)``. With
        ``enabled=False`` it is neither listed nor gettable until ``prompt.enable()``;
        ``timeout`` bounds its handler (and its completers) as an action's ``timeout=``.

        Raises:
            DefinitionError: on a duplicate, a signature that cannot be described, or a
                frozen app.
        """
        self._defining_check()

        def define(handler: Callable[..., Any]) -> Prompt:
            self._defining_check()
            chosen = name or str(getattr(handler, "__name__", ""))
            return self.surface.add_prompt(
                chosen,
                handler,
                title=title,
                description=description,
                requires=requires,
                enabled=enabled,
                timeout=timeout,
            )

        return define

    def list_resources(self, scopes: Collection[str] | None = None) -> list[dict[str, Any]]:
        """Exactly the MCP ``Resource`` objects of ``resources/list`` (the fixed URIs).

        ``scopes`` are the caller's (``None`` lists everything, as for ``list_tools``).
        """
        return self.surface.list_resources(scopes)

    def list_resource_templates(
        self, scopes: Collection[str] | None = None
    ) -> list[dict[str, Any]]:
        """Exactly the MCP ``ResourceTemplate`` objects of ``resources/templates/list``."""
        return self.surface.list_resource_templates(scopes)

    def list_prompts(
        self, scopes: Collection[str] | None = None, *, tenant: str | None = None
    ) -> list[dict[str, Any]]:
        """Exactly the MCP ``Prompt`` objects of ``prompts/list`` (``scopes`` and ``tenant``
        as for ``list_tools``)."""
        return self.surface.list_prompts(scopes, tenant=tenant)

    def enable_ui_app(self, uri: str = DEFAULT_URI) -> Resource:
        """Serves the result renderer as an MCP App (``io.modelcontextprotocol/ui``).

        The renderer becomes the ``ui://`` resource ``uri`` (``text/html;profile=mcp-app``,
        with its CSP in ``_meta.ui``; under 1 MiB), the template ``{uri}/diagrams/{part}``
        serves the diagram library it reads through the host when a result has a diagram,
        and every listed tool with an action whose Presenter
        can send UI blocks carries ``_meta.ui.resourceUri``: a host that supports Apps
        shows the blocks rendered beside the conversation. The text blocks do not change,
        so clients without Apps see nothing new.

        Raises:
            DefinitionError: if ``uri`` is not a ``ui://`` URI, the app already serves one,
                or the app is frozen.
        """
        self._defining_check()
        if not isinstance(uri, str) or not uri.startswith("ui://"):
            raise DefinitionError(f"app '{self.name}': an MCP App's URI starts with ui://")
        if self.ui_app_uri is not None:
            raise DefinitionError(f"app '{self.name}' already serves its UI at {self.ui_app_uri}")
        resource = self.surface.add_resource(
            uri,
            renderer(uri),
            name="mcpfusion-renderer",
            title="Tool results, rendered",
            description="Renders the UI blocks of tool results: tables, charts, diagrams.",
            mime_type=APP_MIME_TYPE,
            meta=APP_META,
        )
        self.surface.add_resource(
            parts_template(uri),
            diagram_library(uri),
            name="mcpfusion-renderer-diagrams",
            title="The renderer's diagram library, in parts",
            description="Parts of the diagram library the renderer reads when a result has one.",
            mime_type=SCRIPT_MIME,
        )
        self.ui_app_uri = uri
        return resource

    # -- serving ---------------------------------------------------------------------------
    # The server module is imported on use: the core never loads the MCP SDK unless the app
    # is actually served, which also keeps `import mcpfusion` fast.

    def run(
        self,
        transport: Literal["stdio", "http"] = "stdio",
        options: HttpOptions | None = None,
        **changes: Any,
    ) -> None:
        """Serves the app until stopped: over stdio (default) or streamable HTTP.

        ``app.run()`` suits clients that spawn the server (Claude Desktop, Cursor);
        ``app.run("http", port=8000)`` serves ``http://127.0.0.1:8000/mcp``.

        Args:
            transport: ``"stdio"`` or ``"http"``.
            options: how to serve HTTP (``HttpOptions``).
            **changes: ``HttpOptions`` fields to set, e.g. ``port=8000``.

        Raises:
            ValueError: on an unknown transport, or HTTP options given for stdio.
            TypeError: on an unknown option.
        """
        from mcpfusion import server

        self.freeze()
        if transport == "stdio":
            if options is not None or changes:
                raise ValueError("HTTP options apply to transport='http' only")
            server.run_stdio(self)
        elif transport == "http":
            server.run_http(self, options, **changes)
        else:
            raise ValueError(f"transport must be 'stdio' or 'http'; got {transport!r}")

    def asgi_app(self, options: HttpOptions | None = None, **changes: Any) -> Starlette:
        """A Starlette app serving the app over streamable HTTP, for uvicorn or gunicorn.

        Example: ``uvicorn billing:asgi --workers 4`` with
        ``asgi = app.asgi_app(stateless=True, host="0.0.0.0", allowed_hosts=[...])``;
        the options are ``HttpOptions`` (``host`` decides the DNS-rebinding default).
        """
        from mcpfusion import server

        self.freeze()
        return server.asgi_app(self, options, **changes)

    def _defining_anything(self) -> None:
        self._defining_check()
        self._catalog = None

    def _defining_check(self) -> None:
        if self._is_frozen:
            raise DefinitionError(
                f"app '{self.name}' is frozen (it is served): define every tool and action "
                "before serving it or calling freeze()"
            )

    def _defining(self, tool: Tool, listed: Sequence[str]) -> None:
        """Checks that definitions are still open and claims ``listed`` names for ``tool``.

        Raises:
            DefinitionError: once the catalog is built, or if a name is taken, saying how
                to fix it.
        """
        self._defining_check()
        for name in listed:
            owner = self._listed.get(name)
            if owner is not None:
                raise DefinitionError(
                    f"app '{self.name}': '{name}' is already listed by tool '{owner.name}'; "
                    "rename one (a flat tool's actions are listed as "
                    "{tool}{separator}{action})"
                )
        for name in listed:
            self._listed[name] = tool
        self._catalog = None  # rebuilt, once, when next read


async def _given(response: ToolResponse) -> ToolResponse:
    return response


async def _invalidated(action: Action, request: Request, response: ToolResponse) -> ToolResponse:
    """A successful mutation's response, ending with its invalidation block (SPEC §15);
    the client's resource subscribers are told what changed."""
    response = with_invalidation(response, action.state_name, action.invalidates)
    if request.client is not None:
        sent = view_of(response)  # the block's entries: the handler's own, then the action's
        patterns = sent.invalidations if sent is not None else action.invalidates
        try:
            await request.client.invalidated(patterns, request.identity)
        except Exception:
            logger.warning("%s: telling subscribers failed", action.state_name, exc_info=True)
    return response


Listed = Literal["tools", "prompts"]
"""A list that can change at run time."""

Announcer = Callable[[str | None, Listed], Awaitable[None]]
"""Told that a list (tools, prompts) of a tenant's callers (or everyone's, ``None``)
changed."""


def tenant_of(identity: Identity | None) -> str | None:
    """The tenant a caller acts for, if any."""
    return identity.tenant if identity is not None else None


def _is_cancellation(exc: BaseException) -> bool:
    """Whether ``exc`` is, or a task group's exception holds, a cancellation."""
    cancelled = anyio.get_cancelled_exc_class()
    if isinstance(exc, BaseExceptionGroup):
        return exc.subgroup(cancelled) is not None
    return isinstance(exc, cancelled)


def _reads_request(action: Action, factory: ContextFactory) -> bool:
    """Whether anything of a call reads its ``Request``: the handler's context or state, a
    timeout or a question to the client, an app's own context factory, or a Presenter
    callback taking the context. A call nothing reads it from makes neither it nor a
    context (1.5 µs of ``benchmarks/call.py``'s ``trivial`` case, a fifth of it).
    """
    return (
        not action.without_request
        or factory is not Context
        or (action.presenter is not None and action.presenter.uses_context)
    )


def _product_type(factory: ContextFactory) -> type | None:
    """The class a context factory returns, when it says so (for parameter injection)."""
    if isinstance(factory, type):
        product: Any = factory
    else:
        try:
            product = typing.get_type_hints(factory).get("return")
        except Exception:  # an unresolvable hint only means no injection by that type
            return None
    if not isinstance(product, type) or product.__module__ in ("builtins", "typing"):
        return None  # `dict` or `str` would capture ordinary parameters of that type
    return product
