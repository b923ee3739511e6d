"""Serves an mcpfusion app through the official MCP SDK: stdio, streamable HTTP, ASGI."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Protocol

import anyio
import uvicorn
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route

from mcpfusion.context import Progress
from mcpfusion.failures import NO_RETRY
from mcpfusion.response import ToolResponse, tool_error
from mcpfusion.validation import preview

__all__ = [
    "ServableApp",
    "asgi_app",
    "build_server",
    "is_loopback",
    "run_http",
    "run_stdio",
    "serve_stdio",
    "to_call_tool_result",
    "transport_security",
]

logger = logging.getLogger("mcpfusion")

_LOOPBACK_NAMES = ("127.0.0.1:*", "localhost:*", "[::1]:*")
"""Host header values a loopback bind accepts, on any port, besides its own address."""


class ServableApp(Protocol):
    """What the adapter needs from an app; ``mcpfusion.Fusion`` is one."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def instructions(self) -> str | None: ...

    def list_tools(self) -> list[dict[str, Any]]: ...

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: Progress | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> ToolResponse: ...


def to_call_tool_result(response: ToolResponse) -> types.CallToolResult:
    """The SDK model of ``response.to_mcp()``, built from the blocks without a dict detour."""
    return types.CallToolResult(
        content=[types.TextContent(text=block) for block in response.blocks],
        structured_content=response.structured_content,
        is_error=response.is_error,
    )


def _escaped(name: str) -> ToolResponse:
    """``INTERNAL_ERROR`` for a failure the app did not contain: a defect on the server side.

    The name is the client's, so it is cut the way every echoed value is.
    """
    return tool_error(
        "INTERNAL_ERROR", f"Tool {preview(name)} failed with an internal error.", recovery=NO_RETRY
    )


def build_server(app: ServableApp) -> Server[Any]:
    """A low-level SDK ``Server`` answering ``tools/list`` and ``tools/call`` from ``app``.

    The tool list is read once, here: a definition mistake only the complete list shows
    (a tool without actions) raises ``DefinitionError`` before the server accepts a
    client, and the list is fixed for the life of the server, so define every tool first.

    Everything the model should read, including an exception the app failed to contain,
    is an ``isError`` result; a cancelled call propagates so the SDK drops its response.
    """
    tools = [types.Tool.model_validate(tool) for tool in app.list_tools()]
    listed = types.ListToolsResult(tools=tools)
    schemas = {tool.name: tool.input_schema for tool in tools}

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listed

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        # Always handed over: the SDK sends nothing unless the client sent a progress token,
        # and the in-process client's callback has no token to look for. A report that
        # cannot be delivered is the app's to contain (Fusion's Request.progress logs it).
        progress: Progress = ctx.session.report_progress
        try:
            response = await app.call_tool(
                params.name, params.arguments, progress=progress, meta=ctx.meta
            )
            if not isinstance(response, ToolResponse):
                raise TypeError(f"call_tool returned {type(response).__name__}")
        except Exception:
            logger.exception("tool %s raised out of the app", preview(params.name))
            response = _escaped(params.name)
        return to_call_tool_result(response)

    return Server(
        app.name,
        version=app.version,
        instructions=app.instructions,
        # Answers the 2026 HTTP path's Mcp-Param header check without a tools/list per call.
        get_tool_input_schema=schemas.get,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def serve_stdio(app: ServableApp) -> None:
    """Serves ``app`` over this process's stdin and stdout until stdin closes.

    While serving, the SDK points file descriptor 1 at stderr, so a stray ``print`` in a
    handler cannot corrupt the protocol stream.
    """
    server = build_server(app)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(app: ServableApp) -> None:
    """Serves ``app`` over stdio, blocking until the client closes the stream."""
    anyio.run(serve_stdio, app)


def is_loopback(host: str) -> bool:
    """Whether the bind address ``host`` is ``localhost`` or a loopback IP.

    Any address of 127.0.0.0/8 counts (Debian names the machine 127.0.1.1), as do ``::1``
    (with or without brackets) and IPv4-mapped loopback such as ``::ffff:127.0.0.1``.
    """
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.removeprefix("[").removesuffix("]"))
    except ValueError:
        return False  # a name other than localhost: we cannot know where it points
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def transport_security(
    host: str,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
) -> TransportSecuritySettings:
    """The DNS-rebinding settings for a server bound to ``host``.

    Protection is on for a loopback bind (see ``is_loopback``; it accepts the loopback
    names and the bound address, on any port) and whenever ``allowed_hosts`` is given; a
    server bound to another interface without ``allowed_hosts`` leaves Host checking to
    its proxy, as the SDK does (``asgi_app`` logs a warning then). ``"name:*"`` matches any
    port. Origins default to ``http://`` and ``https://`` on the allowed hosts.
    """
    if allowed_hosts is None:
        if not is_loopback(host):
            return TransportSecuritySettings(enable_dns_rebinding_protection=False)
        bound = f"[{host.strip('[]')}]:*" if ":" in host else f"{host}:*"
        allowed_hosts = list(dict.fromkeys((*_LOOPBACK_NAMES, bound)))
    if allowed_origins is None:
        allowed_origins = [f"{scheme}://{h}" for h in allowed_hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(allowed_hosts),
        allowed_origins=list(allowed_origins),
    )


def asgi_app(
    app: ServableApp,
    *,
    path: str = "/mcp",
    stateless: bool = False,
    json_response: bool = False,
    host: str = "127.0.0.1",
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    max_request_body_size: int = DEFAULT_MAX_REQUEST_BODY_SIZE,
) -> Starlette:
    """A Starlette app serving ``app`` over streamable HTTP at ``path``.

    Args:
        app: the mcpfusion app.
        path: the endpoint path.
        stateless: a fresh transport per request and no ``Mcp-Session-Id``; needed behind a
            load balancer or with several workers, where a session cannot stick to a process.
        json_response: answer with one JSON body instead of an SSE stream; progress
            notifications are then not delivered.
        host: the address the server is bound to; it decides the DNS-rebinding default
            (see ``transport_security``). Behind a proxy, pass ``allowed_hosts`` instead.
        allowed_hosts: Host header values to accept (``"example.com:*"`` for any port);
            giving them switches DNS-rebinding protection on whatever ``host`` is.
        allowed_origins: Origin header values to accept (default: ``http://`` and
            ``https://`` on each allowed host).
        max_request_body_size: larger requests get HTTP 413 before they are parsed.
    """
    security = transport_security(host, allowed_hosts, allowed_origins)
    if not security.enable_dns_rebinding_protection:
        # Off is the right setting behind a proxy that checks Host, and a dangerous one
        # anywhere else: say so where the operator will see it.
        ignored = "; the allowed origins are not checked without it" if allowed_origins else ""
        logger.warning(
            "DNS-rebinding protection is off: bound to %s without allowed hosts, so any Host "
            "and Origin header is served; pass allowed_hosts (--allowed-host) unless a proxy "
            "checks them%s",
            host,
            ignored,
        )
    manager = StreamableHTTPSessionManager(
        app=build_server(app),
        stateless=stateless,
        json_response=json_response,
        security_settings=security,
        max_request_body_size=max_request_body_size,
    )

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    # A Route, not a Mount: a Mount answers "/mcp" with a redirect to "/mcp/".
    route = Route(path, endpoint=StreamableHTTPASGIApp(manager))
    return Starlette(routes=[route], lifespan=lifespan)


def run_http(
    app: ServableApp,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    stateless: bool = False,
    json_response: bool = False,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    log_level: str = "info",
) -> None:
    """Serves ``app`` over streamable HTTP with uvicorn, blocking until interrupted.

    ``port=0`` picks a free port; the ``mcpfusion`` logger announces the endpoint URL once
    the socket accepts connections. The options are ``asgi_app``'s; ``host`` is both the
    bind address and what decides the DNS-rebinding default.
    """
    asgi = asgi_app(
        app,
        path=path,
        stateless=stateless,
        json_response=json_response,
        host=host,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
    )
    config = uvicorn.Config(asgi, host=host, port=port, log_level=log_level)
    sock = config.bind_socket()
    # Listening before the announcement: a client that reads it can connect at once (the
    # connection waits in the backlog until uvicorn has started).
    sock.listen()
    bound = sock.getsockname()[1]
    url_host = f"[{host}]" if ":" in host else host
    logger.info("serving %r at http://%s:%d%s", app.name, url_host, bound, path)
    uvicorn.Server(config).run(sockets=[sock])
