"""The HTTP hot path's parts: which requests it takes, the SDK state it reads, when it is on."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server.streamable_http import EventCallback, EventStore

from mcpfusion import Fusion, HttpOptions
from mcpfusion._serve.hotpath import call_shape
from mcpfusion._serve.http.hotpath import HotEndpoint
from mcpfusion._serve.http.streams import SessionManager
from mcpfusion._serve.sdk import build_server, hub_of

pytestmark = pytest.mark.anyio


def _app() -> Fusion:
    app = Fusion("hot")
    tool = app.tool("t")

    @tool.action("a")
    async def a() -> str:
        return "a"

    return app


@pytest.mark.parametrize(
    "params",
    [
        {"name": "t", "arguments": {"action": "a"}},
        {"name": "t"},
        {"name": "t", "arguments": None, "_meta": None},
        {"name": "t", "arguments": {}, "_meta": {"progressToken": "p"}},
        {"name": "t", "_meta": {"progressToken": 3}},
    ],
)
def test_plain_calls_are_taken(params: dict[str, Any]) -> None:
    """Only a name, arguments and at most a progress token: the hot path's shape."""
    assert call_shape(params) is not None


@pytest.mark.parametrize(
    "params",
    [
        None,
        [],
        {},
        {"name": 1},
        {"name": "t", "arguments": []},
        {"name": "t", "task": {}},
        {"name": "t", "_meta": {"traceparent": "x"}},
        {"name": "t", "_meta": {"progressToken": 1.5}},
        {"name": "t", "_meta": {"progressToken": None}},
        {"name": "t", "_meta": []},
    ],
)
def test_other_calls_are_the_sdks(params: Any) -> None:
    """Anything else (a task, a trace context, odd tokens or types) goes to the SDK."""
    assert call_shape(params) is None


def test_the_meta_is_the_sdks_view() -> None:
    """The handler gets the SDK's validated _meta, progress token included."""
    shape = call_shape({"name": "t", "_meta": {"progressToken": "p"}})
    assert shape is not None
    name, arguments, meta, token = shape
    assert (name, arguments, token) == ("t", None, "p")
    assert meta is not None and meta["progress_token"] == "p"


class _Forgetful(EventStore):
    """An event store keeping nothing (the hot path only needs to see one is set)."""

    async def store_event(self, stream_id: str, message: Any) -> str:
        return "0"

    async def replay_events_after(self, last_event_id: str, send: EventCallback) -> str | None:
        return None


def _endpoint(**options: Any) -> HotEndpoint:
    app = _app()
    server = build_server(app)
    manager = SessionManager(app=server, **options)
    return HotEndpoint(manager, server, app, hub_of(server))


def test_on_for_stateful_sse_sessions_only() -> None:
    """Stateless, JSON-response and resumable servers are served by the SDK alone."""
    assert _endpoint().enabled
    assert not _endpoint(stateless=True).enabled
    assert not _endpoint(json_response=True).enabled
    assert not _endpoint(event_store=_Forgetful()).enabled


def test_the_option_is_a_bool() -> None:
    """hot_path is on by default and must be a bool."""
    assert HttpOptions().hot_path is True
    with pytest.raises(TypeError, match="hot_path must be a bool; got 'no'"):
        HttpOptions(hot_path="no")  # type: ignore[arg-type]


def test_off_beside_middleware_of_the_servers_own() -> None:
    """A server with middleware of its own is the SDK's (the hot path would skip it)."""
    app = _app()
    server = build_server(app)

    async def own(ctx: Any, call_next: Any) -> Any:
        return await call_next(ctx)

    server.middleware.append(own)
    endpoint = HotEndpoint(SessionManager(app=server), server, app, hub_of(server))
    assert not endpoint.enabled
