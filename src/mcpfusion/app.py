"""The application: its tools, ``tools/list``, and the call path of ``tools/call``."""

from __future__ import annotations

import copy
import inspect
import typing
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from mcpfusion.action import Action
from mcpfusion.context import NO_META, Context, ContextFactory, Progress, Request
from mcpfusion.errors import DefinitionError
from mcpfusion.failures import from_exception, missing_discriminator, unknown_action, unknown_tool
from mcpfusion.response import ToolResponse
from mcpfusion.schema import DISCRIMINATOR, SELECT
from mcpfusion.tool import Definition, Exposition, Route, Tool
from mcpfusion.validation import (
    arguments_problem,
    field_problems,
    select_problems,
    validation_failure,
)

if TYPE_CHECKING:
    from starlette.applications import Starlette


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

    The adapter's seam: ``name``, ``version``, ``instructions``, ``list_tools()`` and
    ``call_tool()``. The core never imports the MCP SDK.
    """

    def __init__(
        self,
        name: str,
        *,
        version: str = "0.1.0",
        instructions: str | None = None,
        context: ContextFactory | None = None,
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise DefinitionError("a Fusion app needs a non-empty name")
        if not isinstance(version, str) or not version:
            raise DefinitionError(f"app '{name}': version must be a non-empty str")
        if instructions is not None and not isinstance(instructions, str):
            raise DefinitionError(f"app '{name}': instructions must be a str or None")
        if context is not None and not callable(context):
            raise DefinitionError(f"app '{name}': context must be a callable factory")
        self.name = name
        self.version = version
        self.instructions = instructions
        self._factory: ContextFactory = context or Context
        self._context_type = _product_type(self._factory)
        self._tools: dict[str, Tool] = {}
        self._listed: dict[str, Tool] = {}  # listed MCP name -> its tool, as tools are defined
        self._definitions: tuple[Definition, ...] | None = None
        self._routes: dict[str, Route] = {}
        self._incomplete: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"Fusion({self.name!r}, tools={list(self._tools)})"

    def tool(
        self,
        name: str,
        *,
        description: str = "",
        exposition: Exposition = "grouped",
        separator: str = "_",
    ) -> Tool:
        """Creates a tool; declare its actions with ``@tool.action(...)``.

        Args:
            name: the MCP tool name (grouped) or the prefix of each action's (flat).
            description: what the tool is for; the first line of its description.
            exposition: ``"grouped"`` (one MCP tool with an ``action`` argument) or
                ``"flat"`` (one MCP tool per action, named ``{tool}{separator}{action}``).
            separator: joins tool and action names in flat exposition.

        Raises:
            DefinitionError: on a duplicate or disallowed name, a name another tool already
                lists, or a bad option.
        """
        if name in self._tools:
            raise DefinitionError(f"app '{self.name}' already has a tool '{name}'")
        tool = Tool(
            name,
            description=description,
            exposition=exposition,
            separator=separator,
            context_type=self._context_type,
            on_change=self._changed,
            claim_name=self._claim_name,
        )
        for listed in tool.listed_names:
            self._claim_name(listed, tool)
        self._tools[name] = tool
        self._changed()
        return tool

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The tools, by name, in definition order."""
        return MappingProxyType(self._tools)

    def list_tools(self) -> list[dict[str, Any]]:
        """Exactly the MCP ``Tool`` objects of ``tools/list``, as JSON-compatible dicts.

        Raises:
            DefinitionError: if a tool is incomplete (no actions, or nothing for
                ``_select`` to pick). The adapter lists the tools when the server is
                built, so such a server refuses to start; ``call_tool`` simply routes
                around an incomplete tool.
        """
        definitions = self._define()
        if self._incomplete:
            raise DefinitionError("; ".join(self._incomplete))
        return copy.deepcopy([d.spec for d in definitions])

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: Progress | None = None,
        meta: Mapping[str, Any] | None = None,
        context: ContextFactory | None = None,
    ) -> ToolResponse:
        """Answers one ``tools/call``; every problem the model should read is a result.

        Args:
            name: the MCP tool name.
            arguments: the call's arguments.
            progress: receives ``(done, total, message)`` reports from ``ctx.progress``.
            meta: the request metadata, exposed as ``Request.meta``.
            context: a factory used instead of the app's for this call (tests use it).

        Cancellation (``asyncio.CancelledError``, anyio's cancel scopes) propagates.
        """
        if self._definitions is None:
            self._define()
        route = self._routes.get(name)
        if route is None:
            return unknown_tool(name, list(self._routes))
        tool, action = route.tool, route.action
        if not isinstance(arguments, Mapping | None):
            target = f"{tool.name}/{action.name}" if action else tool.name
            return validation_failure(target, [arguments_problem(arguments)])
        args = dict(arguments) if arguments else {}
        if action is None:
            if DISCRIMINATOR not in args:
                return missing_discriminator(tool.name, list(tool.actions))
            chosen = args.pop(DISCRIMINATOR)
            action = tool.get(chosen) if isinstance(chosen, str) else None
            if action is None:
                return unknown_action(tool.name, chosen, list(tool.actions))
        request = Request(tool.name, action.name, meta or NO_META, progress)
        return await self._run(tool, action, args, request, context or self._factory)

    async def _run(
        self,
        tool: Tool,
        action: Action,
        args: dict[str, Any],
        request: Request,
        factory: ContextFactory,
    ) -> ToolResponse:
        problems = []
        select: list[str] | None = None
        if tool.select_enabled and SELECT in args:
            raw = args.pop(SELECT)
            problems = select_problems(raw, tool.select_keys)
            select = None if problems else raw
        try:
            kwargs = action.parse(args)
        except ValidationError as exc:
            accepted = [p.wire for p in action.params]
            if tool.select_enabled:
                accepted.append(SELECT)
            problems = field_problems(exc, args, accepted) + problems
        if problems:
            return validation_failure(f"{tool.name}/{action.name}", problems)
        try:
            context = factory(request)
            # A class (the default, Context) never returns an awaitable: skip the check.
            if not isinstance(factory, type) and inspect.isawaitable(context):
                context = await context
            value = await action.invoke(kwargs, request, context)
            return action.respond(value, context, select)
        except Exception as exc:  # everything but cancellation becomes a result
            return from_exception(exc, tool.name, action.name)

    # -- serving: thin delegates to the MCP SDK adapter ------------------------------------
    # The adapter is imported on use so that the core never loads the MCP SDK unless the
    # app is actually served (it also keeps `import mcpfusion` fast).

    def run(
        self,
        transport: Literal["stdio", "http"] = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        stateless: bool = False,
        json_response: bool = False,
        allowed_hosts: Sequence[str] | None = None,
        allowed_origins: Sequence[str] | None = None,
    ) -> None:
        """Serves the app until stopped: over stdio (default) or streamable HTTP.

        ``app.run()`` suits clients that spawn the server (Claude Desktop, Cursor);
        ``app.run("http", port=8000)`` serves ``http://127.0.0.1:8000/mcp``, with
        DNS-rebinding protection on while bound to loopback. ``port=0`` picks a free port.

        Args:
            transport: ``"stdio"`` or ``"http"``.
            host: the HTTP bind address; loopback (``127.0.0.1``, ``::1``, ``localhost``,
                any of 127.0.0.0/8) turns DNS-rebinding protection on.
            port: the HTTP port.
            path: the HTTP endpoint path.
            stateless: no HTTP sessions (for load balancers and several workers).
            json_response: JSON bodies instead of SSE streams (progress is then dropped).
            allowed_hosts: HTTP Host header values to accept (``"name:*"`` for any port);
                they switch DNS-rebinding protection on for any bind address.
            allowed_origins: HTTP Origin header values to accept (default: ``http://``
                and ``https://`` on each allowed host).
        """
        from mcpfusion.adapters import run_http, run_stdio

        if transport == "stdio":
            run_stdio(self)
        elif transport == "http":
            run_http(
                self,
                host=host,
                port=port,
                path=path,
                stateless=stateless,
                json_response=json_response,
                allowed_hosts=allowed_hosts,
                allowed_origins=allowed_origins,
            )
        else:
            raise ValueError(f"transport must be 'stdio' or 'http'; got {transport!r}")

    def asgi_app(
        self,
        *,
        path: str = "/mcp",
        stateless: bool = False,
        json_response: bool = False,
        host: str = "127.0.0.1",
        allowed_hosts: Sequence[str] | None = None,
        allowed_origins: Sequence[str] | None = None,
    ) -> Starlette:
        """A Starlette app serving the app over streamable HTTP, for uvicorn or gunicorn.

        Example: ``uvicorn billing:asgi --workers 4`` with
        ``asgi = app.asgi_app(stateless=True, host="0.0.0.0", allowed_hosts=[...])``.
        ``host`` is where the server is bound: loopback (the default; any of 127.0.0.0/8,
        ``::1`` or ``localhost``) turns DNS-rebinding protection on; elsewhere pass
        ``allowed_hosts``, or protection is off and a warning is logged. See
        ``mcpfusion.adapters.asgi_app``.
        """
        from mcpfusion.adapters import asgi_app

        return asgi_app(
            self,
            path=path,
            stateless=stateless,
            json_response=json_response,
            host=host,
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
        )

    def _define(self) -> tuple[Definition, ...]:
        """The complete tools' definitions; routes lead only to them.

        An incomplete tool is left out and remembered for ``list_tools`` to report: one
        unfinished tool must not turn every call to the others into an exception.
        """
        if self._definitions is not None:
            return self._definitions
        definitions: list[Definition] = []
        incomplete: list[str] = []
        for tool in self._tools.values():
            try:
                definitions.extend(tool.definitions())
            except DefinitionError as exc:
                incomplete.append(str(exc))
        # Listed names are unique: each is claimed when its tool or action is defined.
        self._routes = {d.name: d.route for d in definitions}
        self._incomplete = tuple(incomplete)
        self._definitions = tuple(definitions)
        return self._definitions

    def _claim_name(self, name: str, tool: Tool) -> None:
        """Records that ``tool`` is listed as ``name``, unless another tool already is.

        Raises:
            DefinitionError: if the name is taken, saying how to fix it.
        """
        owner = self._listed.get(name)
        if owner is not None:
            raise DefinitionError(
                f"app '{self.name}': '{name}' is already listed by tool '{owner.name}'; rename "
                "one (a flat tool's actions are listed as {tool}{separator}{action})"
            )
        self._listed[name] = tool

    def _changed(self) -> None:
        self._definitions = None


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
