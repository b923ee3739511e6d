"""What servers ask of a frozen app: its lists and calls per caller, its lifespan, serving."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Literal

from mcpfusion._app.exposure import Progressive
from mcpfusion._app.lifespan import Lifespan
from mcpfusion._app.pipeline import Pipeline, tenant_of
from mcpfusion._app.workflow import Workflow
from mcpfusion._identity import Identity
from mcpfusion._present.response import ToolResponse
from mcpfusion._surface.outcome import SurfaceRequest
from mcpfusion._tools.caller_state import APP_CALLER_STORE, MemoryCallerStore
from mcpfusion._tools.catalog import Catalog
from mcpfusion._tools.client import ClientChannel
from mcpfusion._tools.context import NO_META, ContextFactory, Progress
from mcpfusion._tools.cursors import Cursors
from mcpfusion._tools.definition import TaskBegins, TaskMode
from mcpfusion._tools.dialects import Dialect

if TYPE_CHECKING:
    from starlette.applications import Starlette

    # For run()'s annotations only: serving sits above the app, and run() reaches it
    # through this public façade (its one import of the serving side).
    from mcpfusion.server import HttpOptions


class Serving:
    """``Fusion``'s served side: the lists and calls servers ask of it, per caller, over
    the pipeline its catalog is built with; its lifespan; ``run`` and ``asgi_app``.

    A base class of ``Fusion`` only: it reads the pipeline (``_built`` makes it), the
    lists (``list_tools``, ``scope_key``), the workflow, exposure and client options,
    which ``Fusion`` and its other bases set up.
    """

    name: str
    version: str
    instructions: str | None
    local_identity: Identity | None
    toggled: bool
    schema_dialect: Dialect | None
    workflow: Workflow | None
    exposure: Progressive | None
    _pipeline: Pipeline | None
    _lifespan: Lifespan
    _caller_store: MemoryCallerStore
    _cursors: Cursors
    _client_dialects: Mapping[str, Dialect]
    _ignoring_audience: frozenset[str]
    _built: Callable[[], Pipeline]
    _frozen: Callable[[], Catalog]
    freeze: Callable[[], None]
    scope_key: Callable[[Identity | None], frozenset[str] | None]
    list_tools: Callable[..., list[dict[str, Any]]]

    def _cursor_secret_default(self, key: str) -> None:
        """Seals page cursors under ``key`` (HTTP's shared ``request_state_keys``) when the
        app was given no ``cursor_secret``: its workers then open each other's cursors."""
        if self._cursors.random_secret:
            self._cursors = Cursors(f"app '{self.name}'", key, self._cursors.ttl)

    def running(self) -> AbstractAsyncContextManager[Any]:
        """Runs the app's lifespan: ``async with app.running() as state: ...``.

        Serving and ``FusionTester`` enter it; it starts once however many enter it at the
        same time, and shuts down when the last one leaves (also on an error or a
        cancellation). Without a lifespan it yields ``None``.
        """
        return self._lifespan.running()

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

    @property
    def _catalog(self) -> Catalog | None:
        """The catalog if it is built, ``None`` until then and after a definition."""
        pipeline = self._pipeline
        return pipeline.catalog if pipeline is not None else None

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
