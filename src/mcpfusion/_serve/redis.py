"""Shared state over Redis: the event store, the rate-limit store and the
subscription bus (public as ``mcpfusion.redis``, which documents them).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import urllib.parse
from collections.abc import Callable
from types import TracebackType
from typing import Any, Final, Self

import anyio
import redis.asyncio
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from mcp.server.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp_types import JSONRPCError, JSONRPCMessage, JSONRPCResponse, jsonrpc_message_adapter

from mcpfusion._serve.redis_link import (
    _FAILURES,
    DEFAULT_PREFIX,
    _Link,
    _Pickled,
)
from mcpfusion._serve.sdk_client import (
    StateChanged,
    TenantPromptsListChanged,
    TenantResourceUpdated,
    TenantToolsListChanged,
)

__all__ = ["RedisEventStore", "RedisRateLimitStore", "RedisSubscriptionBus", "shared_state"]

logger = logging.getLogger("mcpfusion")

# -- events ---------------------------------------------------------------------------------

_KINDS: Final[dict[type, str]] = {
    ToolsListChanged: "tools",
    PromptsListChanged: "prompts",
    ResourcesListChanged: "resources",
    ResourceUpdated: "resource",
}


def encode_event(event: ServerEvent) -> bytes:
    """The bytes a bus publishes for ``event``, with the fields mcpfusion's own events add
    (the tenant an event is for; a state change's patterns and origin, SPEC §15)."""
    fields: dict[str, Any] = {"kind": _kind(event)}
    if isinstance(event, ResourceUpdated):
        fields["uri"] = event.uri
    tenant = getattr(event, "tenant", None)
    if isinstance(tenant, str):
        fields["tenant"] = tenant
    if isinstance(event, StateChanged):
        fields["patterns"] = list(event.patterns)
        fields["origin"] = event.origin
    return json.dumps(fields).encode()


def _kind(event: ServerEvent) -> str:
    if isinstance(event, StateChanged):
        return "state"
    for kind in type(event).__mro__:
        if kind in _KINDS:
            return _KINDS[kind]
    raise TypeError(f"no bus encoding for {type(event).__name__}")


def decode_event(data: bytes | str) -> ServerEvent | None:
    """The event ``data`` carries, or ``None`` for anything else."""
    try:
        fields = json.loads(data)
        kind = fields["kind"]
    except (ValueError, TypeError, KeyError):
        return None
    if not isinstance(fields, dict):
        return None
    tenant = fields.get("tenant")
    tenant = tenant if isinstance(tenant, str) else None
    if kind == "tools":
        return TenantToolsListChanged(tenant=tenant) if tenant else ToolsListChanged()
    if kind == "prompts":
        return TenantPromptsListChanged(tenant=tenant) if tenant else PromptsListChanged()
    if kind == "resources":
        return ResourcesListChanged()
    uri = fields.get("uri")
    if not isinstance(uri, str):
        return None
    if kind == "resource":
        return TenantResourceUpdated(uri=uri, tenant=tenant) if tenant else ResourceUpdated(uri)
    patterns, origin = fields.get("patterns"), fields.get("origin")
    if (
        kind == "state"
        and isinstance(patterns, list)
        and all(isinstance(p, str) for p in patterns)
        and isinstance(origin, int)
    ):
        return StateChanged(uri, tuple(patterns), tenant, origin)
    return None


class RedisSubscriptionBus(_Pickled):
    """The MCP SDK's ``SubscriptionBus`` over Redis pub/sub: an event published on any
    replica reaches the ``subscriptions/listen`` streams of every replica.

    ``publish`` sends the event to Redis only; each bus hands what it receives from Redis
    to its own listeners, so a replica's listeners get its own events that way too.
    Delivery is at most once: an event published while Redis is unreachable, or while
    this bus reconnects, is lost (and counted in ``dropped``).

    Serving enters the bus (``async with``), which starts its receiving task.

    Args:
        url: the Redis URL, e.g. ``redis://127.0.0.1:6379/0``.
        channel: the pub/sub channel (default ``mcpfusion:events``); servers of one
            deployment share it.
    """

    def __init__(self, url: str, *, channel: str = f"{DEFAULT_PREFIX}:events") -> None:
        self._arguments = {"url": url, "channel": channel}
        self.channel = channel
        self._link = _Link(url, "server events are dropped")
        self._listeners: dict[object, Callable[[ServerEvent], None]] = {}
        self._group: anyio.abc.TaskGroup | None = None
        self.subscribed = anyio.Event()
        """Set once the receiving task listens on the channel (each time it reconnects)."""
        self.published = 0
        self.received = 0
        self.dropped = 0

    async def publish(self, event: ServerEvent) -> None:
        """Sends ``event`` to every replica's listeners; drops it while Redis is down."""
        data = encode_event(event)
        if not self._link.available():
            self.dropped += 1
            return
        try:
            await self._link.run(lambda client: client.publish(self.channel, data))
        except _FAILURES as exc:
            self.dropped += 1
            self._link.failed(exc)
            return
        self._link.succeeded()
        self.published += 1

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        """Registers ``listener`` for events from Redis; returns its unsubscribe."""
        token = object()
        self._listeners[token] = listener

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe

    async def __aenter__(self) -> Self:
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        group.start_soon(self._receive)
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        group, self._group = self._group, None
        if group is not None:
            group.cancel_scope.cancel()
            await group.__aexit__(None, None, None)
        with anyio.CancelScope(shield=True):
            await self._link.aclose()

    async def _receive(self) -> None:
        while True:
            pubsub = self._link.client.pubsub()
            connected_at: float | None = None
            try:
                await pubsub.subscribe(self.channel)
                connected_at = time.monotonic()
                self._link.succeeded()
                self.subscribed.set()
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                    if message is not None and message.get("type") == "message":
                        self._deliver(message["data"])
            except _FAILURES as exc:
                self.subscribed = anyio.Event()
                self._link.failed(exc, connected_at)
                if self._link.down:
                    await anyio.sleep(self._link.backoff)
            finally:
                with anyio.CancelScope(shield=True):
                    with contextlib.suppress(*_FAILURES):
                        await pubsub.aclose()  # type: ignore[no-untyped-call,unused-ignore]  # redis-py 8 types it

    def _deliver(self, data: bytes) -> None:
        event = decode_event(data)
        if event is None:
            return
        self.received += 1
        for listener in list(self._listeners.values()):
            try:
                listener(event)
            except Exception:  # one listener's failure must not starve the others
                logger.exception("a subscription listener raised")


# -- rate limits -----------------------------------------------------------------------------

# GCRA on Redis's clock: the key holds the theoretical arrival time (TAT) of the next
# call. A call passes when now >= TAT + 1/rate - burst/rate, and moves TAT on by 1/rate;
# this is the token bucket of MemoryRateLimitStore (burst tokens, rate a second), which
# keeps the same TAT per bucket.
_GCRA: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local interval = 1 / tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local next_tat = tat + interval
-- next_tat - burst * interval - now, grouped so that a full bucket waits exactly 0: the
-- other order rounds, and could refuse a first call with burst 1.
local wait = (tat - now) - (burst - 1) * interval
if wait > 0 then
  return tostring(wait)
end
redis.call('SET', KEYS[1], tostring(next_tat), 'PX', math.ceil((next_tat - now) * 1000) + 1)
return '0'
"""


class RedisRateLimitStore(_Pickled):
    """A ``RateLimitStore`` in Redis: one atomic script per call, on Redis's clock, so a
    limit holds across every worker and replica.

    While Redis is unreachable every call passes (fail open) and the outage is logged.
    Serving enters the store (``async with``) to close its connections at the end.

    Args:
        url: the Redis URL.
        prefix: the prefix of its keys (``mcpfusion:rl:<bucket>``).
    """

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX) -> None:
        self._arguments = {"url": url, "prefix": prefix}
        self.prefix = prefix
        self._link = _Link(url, "rate limits are not enforced")
        self._script: Any = None

    async def take(self, key: str, rate: float, burst: int) -> float:
        """Takes one token from ``key``'s bucket; see ``RateLimitStore.take``."""
        if not self._link.available():
            return 0.0
        try:
            if self._script is None:
                self._script = self._link.client.register_script(_GCRA)
            args = [rate, burst]
            keys = [f"{self.prefix}:rl:{key}"]
            wait = await self._link.run(lambda _: self._script(keys=keys, args=args))
        except _FAILURES as exc:
            self._link.failed(exc)
            return 0.0
        self._link.succeeded()
        return float(wait)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        with anyio.CancelScope(shield=True):
            await self._link.aclose()


# -- resumable streams -------------------------------------------------------------------------

GET_STREAM_SUFFIX: Final = "_GET_stream"
"""The SDK's stream id of a session's standalone GET stream (it has no final response)."""


class RedisEventStore(EventStore, _Pickled):
    """The MCP SDK's ``EventStore`` in Redis streams: an SSE stream dropped mid-call
    resumes with ``Last-Event-ID`` and loses no message.

    A resumed call's stream replays what was stored after that id, then follows the call
    in Redis until its response, so nothing sent between the replay and the live stream
    is lost. Each stream key expires ``ttl`` seconds after its last event and keeps at
    most about ``max_events``. Serving gives each session a view of its own
    (``HttpOptions.event_store``), so one session cannot replay another's events.

    Args:
        url: the Redis URL.
        prefix: the prefix of its keys (``mcpfusion:events:<stream>``).
        ttl: seconds a stream is kept after its last event.
        max_events: events kept per stream, about.
        follow_timeout: seconds a resumed stream follows a call still running.
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        ttl: int = 600,
        max_events: int = 1000,
        follow_timeout: float = 300.0,
    ) -> None:
        self._arguments = {
            "url": url,
            "prefix": prefix,
            "ttl": ttl,
            "max_events": max_events,
            "follow_timeout": follow_timeout,
        }
        self.prefix = prefix
        self.ttl = ttl
        self.max_events = max_events
        self.follow_timeout = follow_timeout
        self._link = _Link(url, "SSE streams are not resumable")

    def _key(self, stream_id: str) -> str:
        return f"{self.prefix}:events:{stream_id}"

    async def store_event(self, stream_id: str, message: JSONRPCMessage | None) -> str:
        """Stores one event of ``stream_id``; returns its id (``<stream>:<entry>``)."""
        stream = urllib.parse.quote(stream_id, safe="")
        if not self._link.available():
            return f"{stream}:lost"
        data = b""
        if message is not None:
            data = message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        key = self._key(stream_id)

        async def store(client: redis.asyncio.Redis) -> Any:
            async with client.pipeline(transaction=False) as pipe:
                pipe.xadd(key, {"m": data}, maxlen=self.max_events, approximate=True)
                pipe.expire(key, self.ttl)
                return await pipe.execute()

        try:
            entry, _ = await self._link.run(store)
        except _FAILURES as exc:
            self._link.failed(exc)
            return f"{stream}:lost"
        self._link.succeeded()
        return f"{stream}:{entry.decode()}"

    def stream_of(self, event_id: str) -> str | None:
        """The stream an event id names (``<stream>:<entry>``), read from the id alone;
        ``None`` for an id this store never hands out."""
        stream, sep, cursor = event_id.rpartition(":")
        if not sep or not stream or cursor == "lost":
            return None
        return urllib.parse.unquote(stream)

    async def replay_events_after(
        self, last_event_id: str, send_callback: EventCallback
    ) -> str | None:
        """Sends the events after ``last_event_id``, following a running call to its end.

        Returns the stream id when the live stream should carry on (a session's GET
        stream), else ``None`` (the call's response was sent, or nothing is known).
        """
        stream_id = self.stream_of(last_event_id)
        if stream_id is None:
            return None
        stream, _, cursor = last_event_id.rpartition(":")
        key = self._key(stream_id)
        client: Any = self._link.client
        try:
            if not await client.exists(key):
                return None
            entries = await client.xrange(key, min=f"({cursor}", max="+")
            deadline = time.monotonic() + self.follow_timeout
            while True:
                for entry, fields in entries:
                    cursor = entry.decode()
                    raw = fields.get(b"m")
                    if not raw:
                        continue  # a priming event: nothing to send
                    message = jsonrpc_message_adapter.validate_json(raw)
                    await send_callback(EventMessage(message, f"{stream}:{cursor}"))
                    if isinstance(message, JSONRPCResponse | JSONRPCError):
                        return None
                if stream_id.endswith(GET_STREAM_SUFFIX):
                    return stream_id
                if time.monotonic() >= deadline:
                    return None
                found = await client.xread({key: cursor}, count=100, block=1000)
                entries = found[0][1] if found else []
        except _FAILURES as exc:
            self._link.failed(exc)
            return None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        with anyio.CancelScope(shield=True):
            await self._link.aclose()


def shared_state(url: str, *, stateless: bool = False) -> dict[str, Any]:
    """The HTTP options that share a server's state through the Redis at ``url``.

    Events (``subscription_bus``), rate limits (``rate_limit_store``) and, for a stateful
    server, resumable streams (``event_store``): what ``mcpfusion run --redis-url`` sets.
    Pass them to ``HttpOptions(**shared_state(url))`` or ``app.run("http", ...)``.
    """
    shared: dict[str, Any] = {
        "subscription_bus": RedisSubscriptionBus(url),
        "rate_limit_store": RedisRateLimitStore(url),
    }
    if not stateless:
        shared["event_store"] = RedisEventStore(url)
    return shared
