"""The application (``Fusion``): its registry of tools and middleware, freezing, and serving."""

from __future__ import annotations

import typing
from collections.abc import Awaitable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from mcpfusion._app.concurrency import Running
from mcpfusion._app.exposure import EXPOSURES, Exposure, Progressive
from mcpfusion._app.hosts import hosts_option
from mcpfusion._app.lifespan import Lifespan, LifespanFactory, state_type
from mcpfusion._app.listing import Announcer, Listings
from mcpfusion._app.middleware import Middleware, check_middleware
from mcpfusion._app.pipeline import Pipeline, tenant_of
from mcpfusion._app.surfaces import Surfaces
from mcpfusion._app.workflow import Workflow
from mcpfusion._errors import DefinitionError
from mcpfusion._identity import Identity
from mcpfusion._present.response import ToolResponse
from mcpfusion._present.style import MODEL_DEFAULT, Audience, Style
from mcpfusion._surface.outcome import SurfaceRequest
from mcpfusion._surface.surface import Surface
from mcpfusion._tools.caller_state import APP_CALLER_STORE, MemoryCallerStore
from mcpfusion._tools.catalog import DEFINITIONS, Catalog, Definitions
from mcpfusion._tools.client import ClientChannel
from mcpfusion._tools.context import (
    NO_META,
    Context,
    ContextFactory,
    Progress,
)
from mcpfusion._tools.cursors import DEFAULT_TTL, Cursors
from mcpfusion._tools.definition import TaskBegins, TaskMode
from mcpfusion._tools.dialects import Dialect, check_dialect
from mcpfusion._tools.dialects import client_dialects as client_dialects_of
from mcpfusion._tools.icon import Icon, icons_of, optional_text
from mcpfusion._tools.listing import Listing
from mcpfusion._tools.tool import Exposition, Tool
from mcpfusion._wire.datablock import DataFormat, Delimiter

if TYPE_CHECKING:
    from starlette.applications import Starlette

    # For run()'s annotations only: serving sits above the app, and run() reaches it
    # through this public façade (its one import of the serving side).
    from mcpfusion.server import HttpOptions


class Fusion(Listings, Surfaces):
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
        schema_dialect: whose rules every client's tool definitions follow: ``"mcp"``
            (JSON Schema as written), ``"openai"`` (strict mode), ``"gemini"`` (the
            function-declaration subset) or ``"anthropic"``. ``None`` (default): each
            client's, by its ``clientInfo.name`` (``client_dialects``), else ``"mcp"``.
        client_dialects: ``clientInfo`` names -> dialects, laid over the known hosts'
            (``KNOWN_CLIENTS``: Claude, Codex, ChatGPT, Gemini CLI); ``"mcp"`` turns one off.
        hosts_ignoring_audience: ``clientInfo`` names of hosts that send blocks for the
            user (``audience: ["user"]``) to the model too: their answers leave those UI
            blocks out. ``None`` (default): the hosts known to (``IGNORES_AUDIENCE``:
            Claude Code); ``()`` sends them to every host.
        exposure: ``"all"`` (default) lists every tool; ``"progressive"`` lists the
            ``tool_catalog`` tool and ``always_listed``, and each caller's tools as it asks
            for them (docs/tools.md, large catalogs).
        always_listed: the listed tool names a progressive app always lists.
        title: the name clients show people (``serverInfo.title``); ``name`` is the
            identifier.
        description: what the server does, for people (``serverInfo.description``).
        website_url: the server's home page (``serverInfo.websiteUrl``).
        icons: images clients show beside the server (``serverInfo.icons``, ``Icon``).
        workflow: a ``Workflow`` gating actions by each caller's state: listed and
            callable only where it allows them (``OUT_OF_STATE`` otherwise).
        serialize_destructive: run one destructive call at a time per caller (in this
            process); another meanwhile gets ``BUSY`` with ``retry_after``.
        page_size: how many entries one page of ``tools/list``, ``resources/list``,
            ``resources/templates/list`` and ``prompts/list`` holds, with a ``nextCursor``
            to the next (SPEC §18); ``None`` (default) lists everything on one page.
        max_bytes: the most UTF-8 bytes of text a tool call's answer may send, unless
            its action says otherwise; over it, UI blocks and then rows are left out,
            and the answer says so (SPEC §17). ``None`` (default): no cap.
        cursor_secret: the secret (32+ bytes) sealing paging actions' cursors (SPEC
            §5.4). ``None`` (default): served over HTTP, the first of the shared
            ``request_state_keys`` (``--workers`` makes one for its workers); otherwise one
            drawn per process, so cursors die with it and another process refuses them.
            Replicas on several machines must set the same secret (or the same keys).
        cursor_ttl: how many seconds a page cursor stays valid (an hour by default).

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
        schema_dialect: Dialect | None = None,
        client_dialects: Mapping[str, Dialect] | None = None,
        hosts_ignoring_audience: Collection[str] | None = None,
        exposure: Exposure = "all",
        always_listed: Collection[str] = (),
        title: str | None = None,
        description: str | None = None,
        website_url: str | None = None,
        icons: Sequence[Icon] = (),
        workflow: Workflow | None = None,
        serialize_destructive: bool = False,
        page_size: int | None = None,
        max_bytes: int | None = None,
        cursor_secret: str | bytes | None = None,
        cursor_ttl: float = DEFAULT_TTL,
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
        if not isinstance(serialize_destructive, bool):
            raise DefinitionError(f"app '{name}': serialize_destructive must be True or False")
        if workflow is not None and not isinstance(workflow, Workflow):
            raise DefinitionError(f"app '{name}': workflow must be a Workflow or None")
        for option, value in (("page_size", page_size), ("max_bytes", max_bytes)):
            if value is not None and (type(value) is not int or value < 1):
                raise DefinitionError(f"app '{name}': {option} is a positive int or None")
        if definitions not in DEFINITIONS:
            raise DefinitionError(f"app '{name}': definitions must be one of {DEFINITIONS}")
        if exposure not in EXPOSURES:
            raise DefinitionError(f"app '{name}': exposure must be one of {EXPOSURES}")
        if always_listed and exposure != "progressive":
            raise DefinitionError(f"app '{name}': always_listed needs exposure='progressive'")
        try:
            self._style = Style(data_format, delimiter, ui_audience).over(MODEL_DEFAULT)
        except DefinitionError as exc:
            raise DefinitionError(f"app '{name}': {exc}") from None
        self.definitions: Definitions = definitions
        owner = f"app '{name}'"
        self.schema_dialect: Dialect | None = (
            None if schema_dialect is None else check_dialect(owner, schema_dialect)
        )
        self._client_dialects = client_dialects_of(owner, client_dialects)
        self._ignoring_audience = hosts_option(owner, hosts_ignoring_audience)
        self.title = optional_text(owner, "title", title)
        self.description = optional_text(owner, "description", description)
        self.website_url = optional_text(owner, "website_url", website_url)
        if self.website_url is not None and not self.website_url.startswith(
            ("https://", "http://")
        ):
            raise DefinitionError(f"{owner}: website_url is an http(s) URL; got {website_url!r}")
        self.icons = icons_of(owner, icons)
        self.name = name
        self.version = version
        self.instructions = instructions
        self._factory: ContextFactory = context or Context
        self._context_type = _product_type(self._factory)
        self._tools: dict[str, Tool] = {}
        self._listed: dict[str, Tool] = {}  # listed MCP name -> its tool, as tools are defined
        self._pipeline: Pipeline | None = None  # built with the catalog, dropped by a definition
        self._is_frozen = False
        self.local_identity = local_identity
        self._lifespan = Lifespan(lifespan, self)
        self._state_type = state_type(lifespan)
        self._middleware: list[Middleware] = []
        self.surface = Surface(self)
        """The app's resources, prompts and completions (``resource``, ``prompt``)."""
        self.ui_app_uri: str | None = None
        """The ``ui://`` URI of the MCP App rendering UI blocks (``enable_ui_app``), if any."""
        self._announcers: list[Announcer] = []
        self.toggled = False
        """Whether a tool was enabled or disabled at run time (``Tool.enable``)."""
        self.workflow = workflow
        """The workflow gating the app's actions per caller, if any (``Workflow``)."""
        self.page_size = page_size
        """How many entries a page of the app's lists holds; ``None``: one page."""
        self.max_bytes = max_bytes
        """The byte cap of an answer whose action sets none (SPEC §17); ``None``: no cap."""
        self._running = Running(serialize_destructive)
        self._cursors = Cursors(f"app '{name}'", cursor_secret, cursor_ttl)
        self._caller_store = MemoryCallerStore()  # ctx.caller_state, unless serving names one
        if workflow is not None:
            self.toggled = True  # the lists differ per caller: the SDK path lists them
        self.exposure: Progressive | None = None
        """Each caller's exposed tools when ``exposure="progressive"``, else ``None``."""
        if exposure == "progressive":
            self.exposure = Progressive(name, always_listed)
            self.exposure.define(self)
            self.toggled = True  # the lists differ per caller, as a workflow's

    def __repr__(self) -> str:
        return f"Fusion({self.name!r}, tools={list(self._tools)})"

    def _cursor_secret_default(self, key: str) -> None:
        """Seals page cursors under ``key`` (HTTP's shared ``request_state_keys``) when the
        app was given no ``cursor_secret``: its workers then open each other's cursors."""
        if self._cursors.random_secret:
            self._cursors = Cursors(f"app '{self.name}'", key, self._cursors.ttl)

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
        title: str | None = None,
        icons: Sequence[Icon] = (),
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
            title: the name clients show people (``Tool.title``; each listed tool of a
                flat or split one).
            icons: images clients show beside it (``Tool.icons``).

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
            title=title,
            icons=icons,
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

    def task_mode(
        self, name: str, arguments: Mapping[str, Any] | None
    ) -> tuple[TaskMode, TaskBegins]:
        """Whether a ``tools/call`` runs as an MCP task, and when it becomes one: its
        action's ``task=`` and ``task_begins=`` (``("never", "call")`` for any other)."""
        action = self._frozen().tasked_action(name, arguments)
        return ("never", "call") if action is None else (action.task, action.task_begins)

    def tasked_tools(self) -> frozenset[str]:
        """The listed tool names with an action that may run as an MCP task."""
        return self._frozen().tasked

    def _frozen(self) -> Catalog:
        """The catalog, built (with the pipeline serving it) if a definition changed it."""
        return (self._pipeline or self._built()).catalog

    @property
    def _catalog(self) -> Catalog | None:
        """The catalog if it is built, ``None`` until then and after a definition."""
        pipeline = self._pipeline
        return pipeline.catalog if pipeline is not None else None

    def _built(self) -> Pipeline:
        """Builds the catalog and its pipeline (the middleware chain composed once).

        Raises:
            DefinitionError: if an ``invalidates`` pattern matches no state the app serves.
        """
        self._check_invalidations()
        if self.workflow is not None:  # the workflow names real actions
            self.workflow.check({n: list(t.actions) for n, t in self._tools.items()})
        if self.exposure is not None:
            self.exposure.check(self._listed)
        catalog = Catalog.build(self._tools.values(), lean=self.definitions == "lean")
        pipeline = Pipeline(catalog, self._middleware, self._lifespan, self._factory, self)
        self._pipeline = pipeline
        return pipeline

    def sends_user_ui(self, client: str | None) -> bool:
        """Whether answers to the client named ``client`` keep the UI blocks for the user:
        not for a host that would send them to the model too (``hosts_ignoring_audience``)."""
        return client not in self._ignoring_audience

    def dialect_for(self, client: str | None) -> Dialect:
        """The schema dialect of the client named ``client`` (its ``clientInfo.name``)."""
        if self.schema_dialect is not None:
            return self.schema_dialect
        found = self._client_dialects.get(client) if client is not None else None
        return found or "mcp"

    async def list_tools_for(
        self,
        identity: Identity | None,
        meta: Mapping[str, Any] = NO_META,
        client: str | None = None,
    ) -> list[dict[str, Any]]:
        """The ``tools/list`` of one caller: its scopes', its tenant's, in its client's
        schema dialect; with progressive ``exposure``, only the tools it asked for; with a
        ``workflow``, only the tools with an action its current state allows."""
        tools = self.list_tools(
            self.scope_key(identity), tenant=tenant_of(identity), dialect=self.dialect_for(client)
        )
        if self.workflow is None and self.exposure is None:
            return tools
        self._bind_caller_store()
        if self.exposure is not None:
            tools = self.exposure.shown(tools, await self.exposure.exposed(identity, meta))
        if self.workflow is None:
            return tools
        catalog = self._catalog or self._frozen()
        actions = {
            name: [(a.tool, a.name) for a in route.actions.values()]
            for name, route in catalog.routes.items()
        }
        state = await self.workflow.state_of(identity, meta)
        return self.workflow.shown(tools, actions, state)

    @property
    def per_caller(self) -> bool:
        """Whether ``tools/list`` differs per caller beyond scopes and tenant (a workflow,
        progressive exposure): servers then ask ``list_tools_for`` each time."""
        return self.workflow is not None or self.exposure is not None

    def _bind_caller_store(self) -> None:
        """Makes this app's memory store the current call's, for ``ctx.caller_state``."""
        if APP_CALLER_STORE.get() is not self._caller_store:
            APP_CALLER_STORE.set(self._caller_store)

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
        pipeline = self._pipeline or self._built()
        rest, unchecked = pipeline.call_tool(
            name, arguments, progress, meta, context, identity, client
        )
        response = await rest
        if unchecked is None:
            return response
        # With middleware, the chain's response (the handler's or a middleware's own) has
        # its targets checked here, not in a coroutine of its own (0.3 µs of secured).
        return pipeline.catalog.targets.checked(response, unchecked)

    def _dispatch(self, request: SurfaceRequest) -> Awaitable[ToolResponse]:
        """Runs a resource read, prompt or completion through the pipeline (``dispatch``)."""
        return (self._pipeline or self._built()).dispatch(*request)

    def _checked(self, response: ToolResponse) -> ToolResponse:
        """A resource's or prompt's response with its suggestion targets checked and
        spelled as the catalog lists them, as a tool's are."""
        return (self._pipeline or self._built()).checked(response)

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
        self._pipeline = None

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
        self._pipeline = None  # rebuilt, once, when next read


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
