"""Resumable SSE streams, one scope per session, over any MCP SDK ``EventStore``.

The SDK hands one event store to every session and names each stream after the request
id, so request ``1`` of two sessions would share a stream, and a ``Last-Event-ID`` sent
on one session could replay another's events. Each session here gets a view of the
store that prefixes its streams and its event ids with the session id, and that learns
which stream an event id names *before* anything is replayed: a store sends events as it
finds them, so a check after the replay would come too late.

``InMemoryEventStore`` is the store of one process (``HttpOptions(resumable=True)``);
``mcpfusion.redis.RedisEventStore`` is the one replicas share.
"""

from __future__ import annotations

import logging
from collections import OrderedDict, deque
from typing import Any, Protocol, runtime_checkable

from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import (
    EventCallback,
    EventMessage,
    EventStore,
    StreamableHTTPServerTransport,
)
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import JSONRPCMessage

from mcpfusion._serve.sdk_private import owners, set_event_store

logger = logging.getLogger("mcpfusion")


@runtime_checkable
class StreamLocator(Protocol):
    """An event store that names the stream of an event id without replaying it."""

    def stream_of(self, event_id: str) -> str | None:
        """The stream ``event_id`` belongs to, or ``None`` when the id names none."""
        ...


class InMemoryEventStore(EventStore):
    """The MCP SDK's ``EventStore`` in this process's memory: an SSE stream dropped
    mid-call resumes with ``Last-Event-ID`` and loses no message, as long as the process
    runs and the events are among the last ``max_events`` it stored (older ones are
    dropped first, so memory stays bounded).

    Args:
        max_events: events kept across all streams.

    Raises:
        ValueError: if ``max_events`` is not a positive int.
    """

    def __init__(self, max_events: int = 10_000) -> None:
        if isinstance(max_events, bool) or not isinstance(max_events, int) or max_events < 1:
            raise ValueError(f"max_events must be a positive int; got {max_events!r}")
        self.max_events = max_events
        self._events: OrderedDict[int, tuple[str, JSONRPCMessage | None]] = OrderedDict()
        self._streams: dict[str, deque[int]] = {}
        self._last = 0

    def __len__(self) -> int:
        return len(self._events)

    async def store_event(self, stream_id: str, message: JSONRPCMessage | None) -> str:
        """Stores one event of ``stream_id`` (``None``: a priming event); returns its id."""
        self._last += 1
        self._events[self._last] = (stream_id, message)
        self._streams.setdefault(stream_id, deque()).append(self._last)
        while len(self._events) > self.max_events:
            _, (stream, _) = self._events.popitem(last=False)
            ids = self._streams[stream]
            ids.popleft()  # ids grow: a stream's oldest is the store's oldest of it
            if not ids:
                del self._streams[stream]
        return str(self._last)

    def stream_of(self, event_id: str) -> str | None:
        """The stream of a stored event; ``None`` when the id is unknown (never stored,
        or dropped)."""
        if not (event_id.isascii() and event_id.isdigit()):
            return None
        found = self._events.get(int(event_id))
        return None if found is None else found[0]

    async def replay_events_after(
        self, last_event_id: str, send_callback: EventCallback
    ) -> str | None:
        """Sends the messages its stream had after ``last_event_id``; the stream, or
        ``None`` when the id is unknown (never stored, or dropped)."""
        stream = self.stream_of(last_event_id)
        if stream is None:
            return None
        after = int(last_event_id)
        for event_id in [i for i in self._streams.get(stream, ()) if i > after]:
            event = self._events.get(event_id)
            if event is not None and event[1] is not None:
                await send_callback(EventMessage(event[1], str(event_id)))
        return stream


class SessionScoped(EventStore):
    """``store`` as one session sees it: its own streams and event ids only.

    A ``Last-Event-ID`` replays only when the stream it names is one of this session's,
    whatever the id after the session's own prefix says: event ids of the in-memory store
    are numbered across sessions, and a Redis id names its stream. A store that is no
    ``StreamLocator`` has its replay held back until it says whose stream it was, and
    dropped when that is not this session's (a running call is then not followed live).
    """

    def __init__(self, store: EventStore, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self._streams = f"{session_id}/"
        self._events = f"{session_id}."

    async def store_event(self, stream_id: str, message: JSONRPCMessage | None) -> str:
        event_id = await self.store.store_event(self._streams + stream_id, message)
        return self._events + event_id

    def _inside(self, stream: str | None) -> str | None:
        """The session's name of one of its streams; ``None`` for another's, or none."""
        if stream is None or not stream.startswith(self._streams):
            return None
        return stream.removeprefix(self._streams)

    async def replay_events_after(
        self, last_event_id: str, send_callback: EventCallback
    ) -> str | None:
        if not last_event_id.startswith(self._events):
            return None  # another session's id, or none of ours: nothing to replay
        inner = last_event_id.removeprefix(self._events)

        async def send(event: EventMessage) -> None:
            if event.event_id is not None:
                event = EventMessage(event.message, self._events + event.event_id)
            await send_callback(event)

        if isinstance(self.store, StreamLocator):
            if self._inside(self.store.stream_of(inner)) is None:
                return None
            stream = await self.store.replay_events_after(inner, send)
        else:
            held: list[EventMessage] = []

            async def hold(event: EventMessage) -> None:
                held.append(event)

            stream = await self.store.replay_events_after(inner, hold)
            if self._inside(stream) is None:
                return None
            for event in held:
                await send(event)
        return self._inside(stream)


class SessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager giving each session its own view of the event store.

    Args:
        *args: the SDK manager's.
        max_sessions_per_credential: sessions one verified credential (the SDK's
            principal: client id, issuer, subject) may hold open at once; the next one is
            refused as the SDK refuses one past ``max_sessions`` (503), so one tenant
            cannot take every session. Anonymous sessions count against ``max_sessions``
            only. ``None``: no such cap.
        **kwargs: the SDK manager's.
    """

    def __init__(
        self, *args: Any, max_sessions_per_credential: int | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.max_sessions_per_credential = max_sessions_per_credential

    # An override of the SDK manager's private admission step (sdk_private.PRIVATE lists it).
    def _admit_session(
        self, requestor: AuthorizationContext | None
    ) -> StreamableHTTPServerTransport | None:
        # Called under the SDK's session-creation lock: the count cannot go stale.
        cap = self.max_sessions_per_credential
        if requestor is not None and cap is not None:
            held = sum(1 for owner in owners(self).values() if owner == requestor)
            if held >= cap:
                logger.warning(
                    "refused a session: its credential already holds %d (the cap per credential)",
                    held,
                )
                return None
        transport = super()._admit_session(requestor)
        if transport is not None and self.event_store is not None:
            session_id = transport.mcp_session_id
            assert session_id is not None  # stateful sessions always have one
            scoped: Any = SessionScoped(self.event_store, session_id)
            set_event_store(transport, scoped)
        return transport
