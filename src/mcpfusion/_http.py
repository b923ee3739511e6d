"""Serving an app over streamable HTTP: DNS-rebinding policy, the ASGI app, the uvicorn runner."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route

from mcpfusion._bearer import protected
from mcpfusion._options import HttpOptions, http_options
from mcpfusion._sdk import ServableApp, build_server

logger = logging.getLogger("mcpfusion")

_LOOPBACK_NAMES = ("127.0.0.1:*", "localhost:*", "[::1]:*")
"""Host header values a loopback bind accepts, on any port, besides its own address."""


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


def transport_security(options: HttpOptions) -> TransportSecuritySettings:
    """The DNS-rebinding settings for a server bound to ``options.host``.

    Protection is on for a loopback bind (see ``is_loopback``; it accepts the loopback
    names and the bound address, on any port) and whenever ``allowed_hosts`` is given; a
    server bound to another interface without ``allowed_hosts`` leaves Host checking to
    its proxy, as the SDK does (``asgi_app`` logs a warning then). ``"name:*"`` matches any
    port. Origins default to ``http://`` and ``https://`` on the allowed hosts.
    """
    host, allowed_hosts = options.host, options.allowed_hosts
    if allowed_hosts is None:
        if not is_loopback(host):
            return TransportSecuritySettings(enable_dns_rebinding_protection=False)
        bound = f"[{host.strip('[]')}]:*" if ":" in host else f"{host}:*"
        allowed_hosts = list(dict.fromkeys((*_LOOPBACK_NAMES, bound)))
    allowed_origins = options.allowed_origins
    if allowed_origins is None:
        allowed_origins = [f"{scheme}://{h}" for h in allowed_hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(allowed_hosts),
        allowed_origins=list(allowed_origins),
    )


def asgi_app(app: ServableApp, options: HttpOptions | None = None, **changes: Any) -> Starlette:
    """A Starlette app serving ``app`` over streamable HTTP.

    Args:
        app: the app.
        options: how to serve it (``HttpOptions``).
        **changes: ``HttpOptions`` fields to set, e.g. ``stateless=True``.
    """
    options = http_options(options, changes)
    security = transport_security(options)
    if not security.enable_dns_rebinding_protection:
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
    manager = StreamableHTTPSessionManager(
        app=build_server(app),
        stateless=options.stateless,
        json_response=options.json_response,
        security_settings=security,
        max_request_body_size=options.max_body_bytes,
    )

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        # The app's lifespan runs once per process (each uvicorn worker), around serving.
        async with app.running(), manager.run():
            yield

    endpoint = StreamableHTTPASGIApp(manager)
    if options.auth is not None:
        return Starlette(routes=protected(options.auth, options.path, endpoint), lifespan=lifespan)
    # A Route, not a Mount: a Mount answers "/mcp" with a redirect to "/mcp/".
    route = Route(options.path, endpoint=endpoint)
    return Starlette(routes=[route], lifespan=lifespan)


def run_http(app: ServableApp, options: HttpOptions | None = None, **changes: Any) -> None:
    """Serves ``app`` over streamable HTTP with uvicorn, blocking until interrupted.

    The options are ``asgi_app``'s. ``port=0`` picks a free port; the ``mcpfusion`` logger
    announces the endpoint URL once the socket accepts connections.
    """
    options = http_options(options, changes)
    config = uvicorn.Config(
        asgi_app(app, options), host=options.host, port=options.port, log_level=options.log_level
    )
    sock = config.bind_socket()
    # Listening before the announcement: a client that reads it can connect at once (the
    # connection waits in the backlog until uvicorn has started).
    sock.listen()
    bound = sock.getsockname()[1]
    url_host = f"[{options.host}]" if ":" in options.host else options.host
    logger.info("serving %r at http://%s:%d%s", app.name, url_host, bound, options.path)
    uvicorn.Server(config).run(sockets=[sock])
