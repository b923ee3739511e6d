"""Every read and write of the MCP SDK's private attributes, checked against the installed SDK.

The hot paths answer as the SDK would, and to do so they look behind the SDK's public API:
the session manager's transports and owners, a transport's idle countdown and event store,
a request session's connection, ``MCPServer``'s tool manager. Each such access is one small
function here and nowhere else, and ``check`` (run once when a server is built) fails with
the installed SDK's version when one of them is gone, instead of an ``AttributeError``
in the middle of a request.
"""

from __future__ import annotations

import functools
import importlib.metadata
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.connection import Connection
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool, ToolManager
from mcp.server.session import ServerSession
from mcp.server.streamable_http import EventStore, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = [
    "PRIVATE",
    "SdkChanged",
    "add_tool",
    "check",
    "connection_of",
    "hold_open",
    "owners",
    "sdk_version",
    "set_event_store",
    "tool_manager",
    "transports",
]

PRIVATE: Final[tuple[tuple[type[Any], str], ...]] = (
    (StreamableHTTPSessionManager, "_server_instances"),
    (StreamableHTTPSessionManager, "_session_owners"),
    (StreamableHTTPSessionManager, "_admit_session"),  # overridden by _serve/http/streams
    (StreamableHTTPServerTransport, "_idle_timeout"),
    (StreamableHTTPServerTransport, "_requests_in_flight"),
    (StreamableHTTPServerTransport, "_event_store"),
    (ServerSession, "_connection"),
    (MCPServer, "_tool_manager"),
    (ToolManager, "_tools"),
)
"""Each SDK class and the private attribute (or method) of it this module reaches."""


class SdkChanged(RuntimeError):
    """The installed MCP SDK lacks a private attribute mcpfusion relies on."""


def sdk_version() -> str:
    """The installed MCP SDK's version, as its distribution metadata says."""
    return importlib.metadata.version("mcp")


def _has(owner: type[Any], name: str) -> bool:
    """Whether ``owner`` has ``name``: a class attribute, or one its ``__init__`` sets.

    An instance attribute exists only on instances; the names ``__init__``'s code
    touches (``co_names``) show it is set there without building one.
    """
    if hasattr(owner, name):
        return True
    init = getattr(owner.__init__, "__code__", None)
    return init is not None and name in init.co_names


@functools.cache
def check() -> None:
    """Fails unless every private attribute of ``PRIVATE`` is there (checked once).

    Raises:
        SdkChanged: naming the missing attributes and the installed SDK's version.
    """
    missing = [f"{owner.__name__}.{name}" for owner, name in PRIVATE if not _has(owner, name)]
    if missing:
        raise SdkChanged(
            f"mcp {sdk_version()} lacks {', '.join(missing)}, which mcpfusion's serving layer "
            "reads (mcpfusion._serve.sdk_private): install the mcp version mcpfusion pins"
        )


# -- the session manager (streamable HTTP) ---------------------------------------------------


def transports(
    manager: StreamableHTTPSessionManager,
) -> Mapping[str, StreamableHTTPServerTransport]:
    """The open stateful sessions' transports, by session id (the manager's own, live)."""
    found: dict[str, StreamableHTTPServerTransport] = manager._server_instances
    return found


def owners(manager: StreamableHTTPSessionManager) -> Mapping[str, AuthorizationContext]:
    """The credential that opened each session, by session id (live)."""
    found: dict[str, AuthorizationContext] = manager._session_owners
    return found


# -- a session's transport ----------------------------------------------------------------


def set_event_store(transport: StreamableHTTPServerTransport, store: EventStore) -> None:
    """Gives ``transport`` its own event store (it reads it from this attribute only)."""
    transport._event_store = store


@contextmanager
def hold_open(transport: StreamableHTTPServerTransport) -> Iterator[None]:
    """Holds the session open while a request is served, as the SDK's transport does.

    ``StreamableHTTPServerTransport.handle_request``: the idle countdown stops while any
    request is in flight and restarts when the last one ends.
    """
    idle = transport.idle_scope
    timeout = transport._idle_timeout
    if idle is None or timeout is None:
        yield
        return
    transport._requests_in_flight += 1
    idle.deadline = math.inf
    try:
        yield
    finally:
        transport._requests_in_flight -= 1
        if not transport._requests_in_flight:
            idle.deadline = anyio.current_time() + timeout


# -- a request's session ------------------------------------------------------------------


def connection_of(session: object) -> Connection | None:
    """The connection behind a request's session (``ctx.session``), if it has one.

    ``Connection.state`` is the SDK's documented per-connection scratch space; only the
    way to it from a request handler is private.
    """
    found = getattr(session, "_connection", None)
    return found if isinstance(found, Connection) else None


# -- MCPServer (the high-level server the SDK integration mounts onto) ----------------------


def tool_manager(server: MCPServer[Any]) -> ToolManager:
    """``server``'s tool manager: the server has no public way to add a built tool."""
    manager: ToolManager = server._tool_manager
    return manager


def add_tool(manager: ToolManager, tool: Tool) -> None:
    """Adds a ready-made tool under its name, as the manager's own ``add_tool`` stores one."""
    manager._tools[tool.name] = tool
