"""The SDK's private attributes, each behind one accessor, checked against the installed SDK."""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.server import Server, ServerRequestContext
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.connection import Connection
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.streamable_http import StreamableHTTPServerTransport

from mcpfusion import Fusion
from mcpfusion._serve import sdk_private
from mcpfusion._serve.http.streams import SessionManager
from mcpfusion._serve.sdk import build_server
from mcpfusion._serve.sdk_private import (
    PRIVATE,
    SdkChanged,
    add_tool,
    check,
    connection_of,
    hold_open,
    owners,
    sdk_version,
    set_event_store,
    tool_manager,
    transports,
)
from mcpfusion.server import InMemoryEventStore

pytestmark = pytest.mark.anyio


def test_every_private_attribute_is_in_the_installed_sdk() -> None:
    """``check`` passes on the installed SDK: each listed class has each listed attribute."""
    check.cache_clear()
    check()
    assert {name for _, name in PRIVATE} >= {
        "_server_instances",
        "_session_owners",
        "_idle_timeout",
        "_requests_in_flight",
        "_event_store",
        "_connection",
    }


def test_a_missing_attribute_fails_naming_the_sdk_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """An attribute the SDK no longer has fails the check with the SDK's version and name."""

    class Gone:
        def __init__(self) -> None:
            self.kept = 1

    monkeypatch.setattr(sdk_private, "PRIVATE", (*PRIVATE, (Gone, "_vanished")))
    check.cache_clear()
    try:
        with pytest.raises(SdkChanged, match=rf"mcp {sdk_version()} lacks Gone\._vanished"):
            check()
    finally:
        check.cache_clear()


def test_an_attribute_set_in_init_counts_as_present(monkeypatch: pytest.MonkeyPatch) -> None:
    """An instance attribute is found in ``__init__``'s code, without building an instance."""

    class Kept:
        def __init__(self) -> None:
            self._inside = 1

    monkeypatch.setattr(sdk_private, "PRIVATE", ((Kept, "_inside"),))
    check.cache_clear()
    try:
        check()
    finally:
        check.cache_clear()


def test_the_manager_accessors_are_its_live_maps() -> None:
    """``transports`` and ``owners`` read the session manager's own maps, not copies."""
    manager = SessionManager(app=Server("x"))
    alice = AuthorizationContext(client_id="alice", issuer=None, subject="alice")
    transport = manager._admit_session(alice)
    assert transport is not None and transport.mcp_session_id is not None
    assert transports(manager) == {transport.mcp_session_id: transport}
    assert owners(manager) == {transport.mcp_session_id: alice}


def test_the_sdk_keeps_what_the_hot_path_reads() -> None:
    """The SDK state the hot path reads is where the installed SDK keeps it."""
    manager = SessionManager(app=Server("x"))
    assert manager._server_instances == {}
    assert manager._session_owners == {}
    transport = StreamableHTTPServerTransport("abc", idle_timeout=5)
    assert transport._idle_timeout == 5
    assert transport._requests_in_flight == 0
    assert transport.idle_scope is None  # made by connect()


def test_a_transport_reads_the_event_store_it_is_given() -> None:
    """``set_event_store`` replaces the store the transport resumes streams from."""
    transport = StreamableHTTPServerTransport("abc")
    store = InMemoryEventStore()
    set_event_store(transport, store)
    assert transport._event_store is store


async def test_a_request_in_flight_holds_the_session_open() -> None:
    """While a hot request runs the idle countdown stops; it restarts when the last ends."""
    transport = StreamableHTTPServerTransport("abc", idle_timeout=5)
    async with transport.connect():
        idle = transport.idle_scope
        assert idle is not None
        with hold_open(transport):
            with hold_open(transport):
                assert idle.deadline == math.inf
            assert idle.deadline == math.inf
        assert anyio.current_time() < idle.deadline <= anyio.current_time() + 5
        assert transport._requests_in_flight == 0
        await transport.terminate()


async def test_a_request_session_leads_to_its_connection() -> None:
    """``connection_of(ctx.session)`` is the request's connection, over a real client."""
    seen: list[Connection | None] = []

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        seen.append(connection_of(ctx.session))
        return types.ListToolsResult(tools=[])

    server: Server[Any] = Server("x", on_list_tools=on_list_tools)
    with anyio.fail_after(10):
        async with Client(server) as client:
            await client.list_tools()
    assert len(seen) == 1 and isinstance(seen[0], Connection)
    assert connection_of(object()) is None


def test_a_built_tool_is_added_to_an_mcpserver() -> None:
    """``add_tool`` puts a ready-made tool in the server's tool manager under its name."""
    server: MCPServer[Any] = MCPServer("x")

    def ping() -> str:
        """Answers pong."""
        return "pong"

    manager = tool_manager(server)
    add_tool(manager, Tool.from_function(ping))
    assert manager.get_tool("ping") is not None


def test_building_a_server_checks_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    """``build_server`` runs the check: a changed SDK stops a server before it serves."""

    class Gone:
        """An SDK class that lost the attribute read."""

    app = Fusion("checked")

    @app.tool("t").action("a")
    async def a() -> str:
        return "a"

    monkeypatch.setattr(sdk_private, "PRIVATE", ((Gone, "_vanished"),))
    check.cache_clear()
    try:
        with pytest.raises(SdkChanged, match=r"lacks Gone\._vanished.*mcp version mcpfusion pins"):
            build_server(app)
    finally:
        check.cache_clear()
