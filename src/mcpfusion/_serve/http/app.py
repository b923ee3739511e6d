"""Serving an app over streamable HTTP: the host policy, the ASGI app, the uvicorn runner."""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import re
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Final

import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpfusion._app.lifespan import settle
from mcpfusion._app.ratelimit import SERVING_STORE, RateLimitStore
from mcpfusion._serve.http.bearer import protected
from mcpfusion._serve.http.guard import RequestGuard
from mcpfusion._serve.http.heads import head_bounded_protocol
from mcpfusion._serve.http.hosts import LOOPBACK_HOSTS, HostPolicy
from mcpfusion._serve.http.hotpath import HotEndpoint
from mcpfusion._serve.http.streams import InMemoryEventStore, SessionManager
from mcpfusion._serve.options import (
    HttpOptions,
    http_options,
)
from mcpfusion._serve.sdk import ServableApp, build_server, hub_of, tasks_of
from mcpfusion._serve.sdk_private import transports
from mcpfusion._serve.task_placement import task_runner
from mcpfusion._tools.caller_state import SERVING_CALLER_STORE, CallerStore

logger = logging.getLogger("mcpfusion")


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


def host_policy(options: HttpOptions) -> HostPolicy:
    """The DNS-rebinding policy for a server bound to ``options.host``.

    Protection is on for a loopback bind (see ``is_loopback``; it accepts the loopback
    names and the bound address, on any port) and whenever ``allowed_hosts`` is given; a
    server bound to another interface without ``allowed_hosts`` leaves Host checking to
    its proxy (``asgi_app`` logs a warning then). ``"name:*"`` matches any port (or none).
    Origins default to ``http://`` and ``https://`` on the allowed hosts; CORS origins are
    allowed too.
    """
    host, hosts = options.host, options.allowed_hosts
    if hosts is None:
        if not is_loopback(host):
            return HostPolicy(None)
        bound = f"[{host.strip('[]')}]:*" if ":" in host else f"{host}:*"
        hosts = tuple(dict.fromkeys((*LOOPBACK_HOSTS, bound)))
    origins = options.allowed_origins
    if origins is None:
        origins = tuple(f"{scheme}://{h}" for h in hosts for scheme in ("http", "https"))
    return HostPolicy(tuple(hosts), tuple(dict.fromkeys((*origins, *options.cors_origins))))


def asgi_app(app: ServableApp, options: HttpOptions | None = None, **changes: Any) -> Starlette:
    """A Starlette app serving ``app`` over streamable HTTP.

    Args:
        app: the app.
        options: how to serve it (``HttpOptions``).
        **changes: ``HttpOptions`` fields to set, e.g. ``stateless=True``.
    """
    options = http_options(options, changes)
    policy = host_policy(options)
    if not policy.protected:
        # Off is the right setting behind a proxy that checks Host, and a dangerous one
        # anywhere else: say so where the operator will see it.
        ignored = ""
        if options.allowed_origins:
            ignored = "; the allowed origins are not checked without it"
        logger.warning(
            "DNS-rebinding protection is off: bound to %s without allowed hosts, so any Host "
            "and Origin header is served; pass allowed_hosts (--allowed-host) unless a proxy "
            "checks them%s",
            options.host,
            ignored,
        )
    runner = task_runner(options)
    server = build_server(
        app,
        subscription_bus=options.subscription_bus,
        request_state_keys=options.request_state_keys,
        task_store=options.task_store,
        task_runner=runner,
    )
    event_store = options.event_store
    if event_store is None and options.resumable:
        event_store = InMemoryEventStore()
    manager = SessionManager(
        app=server,
        event_store=event_store,
        # The SSE retry field, sent with each resumable stream's priming event.
        retry_interval=round(options.sse_retry * 1000) if event_store is not None else None,
        stateless=options.stateless,
        json_response=options.json_response,
        # Host, Origin and the body are checked by the RequestGuard, exactly.
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=options.max_body_bytes,
        max_sessions=options.max_sessions,
        max_sessions_per_credential=options.max_sessions_per_credential,
        session_idle_timeout=options.session_idle_timeout,
    )

    tasks = tasks_of(server)
    signin_store = options.signin.store if options.signin is not None else None
    shared = (
        options.subscription_bus,
        event_store,
        options.rate_limit_store,
        options.caller_store,
        signin_store,
        # An app without task actions serves no tasks: its store stays closed.
        options.task_store if tasks is not None else None,
        runner if tasks is not None else None,
    )

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        # The app's lifespan runs once per process (each uvicorn worker), around serving;
        # so do the shared stores' connections.
        async with contextlib.AsyncExitStack() as stack:
            parts: dict[Any, None] = dict.fromkeys(p for p in shared if p is not None)
            for part in parts:
                if hasattr(part, "__aenter__") and hasattr(part, "__aexit__"):
                    await stack.enter_async_context(part)
            await stack.enter_async_context(app.running())
            if tasks is not None:  # tasks outlive their requests: they run in the lifespan
                await stack.enter_async_context(tasks.running())
            await stack.enter_async_context(manager.run())
            yield

    hub = hub_of(server)
    sdk: ASGIApp = StreamableHTTPASGIApp(manager)
    if options.hot_path:
        sdk = HotEndpoint(manager, server, app, hub)
    endpoint: ASGIApp = RequestGuard(
        sdk,
        policy,
        stateless=options.stateless,
        max_body_bytes=options.max_body_bytes,
        body_timeout=options.body_timeout,
        max_batch_size=options.max_batch_size,
        sessions=transports(manager),
    )
    if options.rate_limit_store is not None:
        endpoint = _WithRateLimitStore(endpoint, options.rate_limit_store)
    if options.caller_store is not None:
        endpoint = _WithCallerStore(endpoint, options.caller_store)
    middleware = []
    if options.cors_origins:
        middleware.append(
            Middleware(
                McpCors,
                allow_origins=list(options.cors_origins),
                allow_methods=["GET", "POST", "DELETE"],
                allow_headers=list(CORS_REQUEST_HEADERS),
                expose_headers=list(CORS_EXPOSED_HEADERS),
                max_age=600,
            )
        )
    # A Route, not a Mount: a Mount answers "/mcp" with a redirect to "/mcp/".
    routes: list[BaseRoute]
    if options.signin is not None:
        # Imported here: Authlib (the signin extra) loads only for a server that signs in.
        from mcpfusion._auth.signin.server import Facade

        facade = Facade(options.signin, options.rate_limit_store)
        served = facade.serving(endpoint)
        routes = [*facade.routes(), *protected(facade.auth(), options.path, served)]
    elif options.auth is not None:
        routes = protected(options.auth, options.path, endpoint)
    else:
        routes = [Route(options.path, endpoint=endpoint)]
    starlette = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    # Called when shutdown starts: listen streams never end on their own, so they are
    # closed gracefully (each client gets its final result) instead of holding the grace
    # period open.
    starlette.state.close_streams = hub.close_streams if hub is not None else lambda: None
    return starlette


class _WithRateLimitStore:
    """Runs each request with the options' rate-limit store as the serving store.

    Calls run in tasks started from the request (a stateful session's from its first
    request), which inherit the context variable.
    """

    def __init__(self, endpoint: ASGIApp, store: RateLimitStore) -> None:
        self.endpoint = endpoint
        self.store = store

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = SERVING_STORE.set(self.store)
        try:
            await self.endpoint(scope, receive, send)
        finally:
            SERVING_STORE.reset(token)


class _WithCallerStore:
    """Runs each request with the options' caller store as the serving one (issue 30),
    inherited by its calls' tasks as the rate-limit store is."""

    def __init__(self, endpoint: ASGIApp, store: CallerStore) -> None:
        self.endpoint = endpoint
        self.store = store

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = SERVING_CALLER_STORE.set(self.store)
        try:
            await self.endpoint(scope, receive, send)
        finally:
            SERVING_CALLER_STORE.reset(token)


CORS_REQUEST_HEADERS: Final = (
    "accept",
    "authorization",
    "content-type",
    "last-event-id",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "mcp-session-id",
)
"""The headers a browser client may send across origins (and any ``Mcp-Param-<name>``)."""

CORS_EXPOSED_HEADERS: Final = ("mcp-session-id", "mcp-protocol-version", "www-authenticate")
"""The response headers a browser client must be able to read (``WWW-Authenticate`` names
the authorization server when a token is missing)."""

_PARAM_HEADER: Final = re.compile(r"mcp-param-[!#$%&'*+.^_`|~0-9a-z-]+")
"""An ``Mcp-Param-<name>`` header name, lower case (the name is an RFC 9110 token)."""


class McpCors(CORSMiddleware):
    """Starlette's CORS middleware, also allowing 2026-07-28's ``Mcp-Param-<name>`` headers.

    Their names come from each tool's input schema (``x-mcp-header``), so no fixed list
    holds them: a preflight asking for such headers gets them allowed by name, the other
    requested headers being checked against ``CORS_REQUEST_HEADERS`` as before.
    """

    def preflight_response(self, request_headers: Headers) -> Response:
        listed = request_headers.get("access-control-request-headers", "")
        requested = [h.strip().lower() for h in listed.split(",") if h.strip()]
        params = [h for h in requested if _PARAM_HEADER.fullmatch(h)]
        if not params:
            return super().preflight_response(request_headers)
        raw = [(k, v) for k, v in request_headers.raw if k != b"access-control-request-headers"]
        rest = ", ".join(h for h in requested if h not in params)
        if rest:
            raw.append((b"access-control-request-headers", rest.encode("latin-1")))
        response = super().preflight_response(Headers(raw=raw))
        if response.status_code == 200:
            allowed = response.headers["access-control-allow-headers"]
            response.headers["access-control-allow-headers"] = ", ".join([allowed, *params])
        return response


def uvicorn_config(app: ServableApp, options: HttpOptions) -> uvicorn.Config:
    """The uvicorn configuration serving ``app`` as ``options`` say (timeouts included)."""
    return uvicorn.Config(
        asgi_app(app, options),
        host=options.host,
        port=options.port,
        log_level=options.log_level,
        access_log=options.access_log,
        http=head_bounded_protocol(options),
        timeout_keep_alive=options.keep_alive_timeout,
        # Typed int, used as asyncio.timeout's float.
        timeout_graceful_shutdown=options.shutdown_timeout,  # type: ignore[arg-type]
    )


class GracefulServer(uvicorn.Server):
    """uvicorn's server, closing listen streams as soon as shutdown starts.

    On SIGTERM or SIGINT uvicorn stops accepting connections, lets requests in flight
    finish for ``shutdown_timeout`` seconds, then cancels the rest and runs the lifespan's
    shutdown.
    """

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        settle()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        close: Callable[[], None] | None = getattr(
            getattr(self.config.app, "state", None), "close_streams", None
        )
        if close is not None:
            close()
        await super().shutdown(sockets)


def announce(app: ServableApp, options: HttpOptions, sock: socket.socket) -> None:
    """Logs the endpoint URL ``sock`` serves (how ``port=0`` tells its caller the port)."""
    bound = sock.getsockname()[1]
    url_host = f"[{options.host}]" if ":" in options.host else options.host
    logger.info("serving %r at http://%s:%d%s", app.name, url_host, bound, options.path)


def run_http(app: ServableApp, options: HttpOptions | None = None, **changes: Any) -> None:
    """Serves ``app`` over streamable HTTP with uvicorn, blocking until interrupted.

    The options are ``asgi_app``'s. ``port=0`` picks a free port; the ``mcpfusion`` logger
    announces the endpoint URL once the socket accepts connections.

    Raises:
        ValueError: with ``workers`` above 1: an app object cannot be rebuilt in other
            processes, so use ``mcpfusion.server.run_workers`` with a factory.
    """
    options = http_options(options, changes)
    if options.workers > 1:
        raise ValueError(
            "workers > 1 needs a factory each worker can import: use "
            "mcpfusion.server.run_workers('module:app', options) or mcpfusion run --workers"
        )
    config = uvicorn_config(app, options)
    sock = config.bind_socket()
    # Listening before the announcement: a client that reads it can connect at once (the
    # connection waits in the backlog until uvicorn has started).
    sock.listen()
    announce(app, options, sock)
    GracefulServer(config).run(sockets=[sock])
