"""Resumable SSE streams, one scope per session, over any MCP SDK ``EventStore``.

The SDK hands one event store to every session and names each stream after the request
id, so request ``1`` of two sessions would share a stream, and a ``Last-Event-ID`` sent
on one session could replay another's events. Each session here gets a view of the
store that prefixes its streams and its event ids with the session id and replays only
its own ids.
"""

from __future__ import annotations

from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import (
    EventCallback,
    EventMessage,
    EventStore,
    StreamableHTTPServerTransport,
)
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import JSONRPCMessage


class SessionScoped(EventStore):
    """``store`` as one session sees it: its own streams and event ids only."""

    def __init__(self, store: EventStore, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self._streams = f"{session_id}/"
        self._events = f"{session_id}."

    async def store_event(self, stream_id: str, message: JSONRPCMessage | None) -> str:
        event_id = await self.store.store_event(self._streams + stream_id, message)
        return self._events + event_id

    async def replay_events_after(
        self, last_event_id: str, send_callback: EventCallback
    ) -> str | None:
        if not last_event_id.startswith(self._events):
            return None  # another session's id, or none of ours: nothing to replay

        async def send(event: EventMessage) -> None:
            if event.event_id is not None:
                event = EventMessage(event.message, self._events + event.event_id)
            await send_callback(event)

        stream = await self.store.replay_events_after(
            last_event_id.removeprefix(self._events), send
        )
        if stream is None or not stream.startswith(self._streams):
            return None
        return stream.removeprefix(self._streams)


class SessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager giving each session its own view of the event store."""

    def _admit_session(
        self, requestor: AuthorizationContext | None
    ) -> StreamableHTTPServerTransport | None:
        transport = super()._admit_session(requestor)
        if transport is not None and self.event_store is not None:
            session_id = transport.mcp_session_id
            assert session_id is not None  # stateful sessions always have one
            scoped: Any = SessionScoped(self.event_store, session_id)
            # The transport reads its store from this attribute only (mcp 2.3, pinned by
            # tests/unit/test_streams.py).
            transport._event_store = scoped
        return transport
