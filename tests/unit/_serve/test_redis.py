"""Scale-out in-process: the options, the CLI flags, pickling for workers, per-session event
scopes, the serving rate-limit store, and the Redis parts with Redis unreachable."""

from __future__ import annotations

import logging
import pickle
import socket
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.streamable_http import EventMessage, EventStore
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from mcp_types import JSONRPCMessage, JSONRPCNotification, JSONRPCResponse

from mcpfusion import Fusion, HttpOptions, Identity
from mcpfusion._app.ratelimit import SERVING_STORE
from mcpfusion._serve.http.streams import SessionManager, SessionScoped
from mcpfusion._serve.redis import (
    RedisEventStore,
    RedisRateLimitStore,
    RedisSubscriptionBus,
    decode_event,
    encode_event,
)
from mcpfusion._serve.redis_link import CALL_WAIT, _Link
from mcpfusion._serve.sdk import build_server, hub_of
from mcpfusion._serve.sdk_client import (
    StateChanged,
    TenantPromptsListChanged,
    TenantResourceUpdated,
    TenantToolsListChanged,
)
from mcpfusion.cli import UsageError, build_parser, http_options, main
from mcpfusion.middleware import MemoryRateLimitStore, rate_limit
from mcpfusion.server import InMemoryEventStore, asgi_app, run_http, run_workers
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


NOWHERE = f"redis://127.0.0.1:{_closed_port()}/0"
"""A Redis URL nothing listens on."""


# -- options and flags ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"workers": 0}, ValueError, "workers must be at least 1"),
        ({"workers": 2.0}, TypeError, "workers must be a int"),
        ({"shutdown_timeout": -1}, ValueError, "shutdown_timeout must be 0 or more"),
        ({"subscription_bus": object()}, TypeError, "subscription_bus must have publish"),
        ({"event_store": object()}, TypeError, "event_store must have store_event"),
        (
            {"event_store": RedisEventStore(NOWHERE), "stateless": True},
            ValueError,
            "event_store needs sessions",
        ),
        ({"rate_limit_store": object()}, TypeError, "rate_limit_store must be a"),
        ({"resumable": True, "stateless": True}, ValueError, "resumable needs sessions"),
        ({"resumable": 1}, TypeError, "resumable must be a bool"),
        ({"sse_retry": 0}, ValueError, r"sse_retry must be in \(0, 3600\]"),
        ({"sse_retry": "1"}, TypeError, "sse_retry must be a"),
    ],
)
def test_scale_out_options_are_checked(
    changes: dict[str, Any], error: type[Exception], message: str
) -> None:
    """Workers, the grace period and the shared parts are checked where options are made."""
    with pytest.raises(error, match=message):
        HttpOptions(**changes)


def test_cli_flags_map_onto_the_scale_out_options() -> None:
    """--workers, --shutdown-timeout and --redis-url (event store when stateful only)."""
    base = ["run", "x:app", "--http", "--redis-url", NOWHERE]
    options = http_options(build_parser().parse_args([*base, "--workers", "3"]))
    assert options.workers == 3
    assert isinstance(options.subscription_bus, RedisSubscriptionBus)
    assert isinstance(options.rate_limit_store, RedisRateLimitStore)
    assert isinstance(options.event_store, RedisEventStore)
    stateless = http_options(
        build_parser().parse_args([*base, "--stateless", "--shutdown-timeout", "2.5"])
    )
    assert (stateless.event_store, stateless.shutdown_timeout) == (None, 2.5)
    plain = http_options(build_parser().parse_args(["run", "x:app", "--http"]))
    assert (plain.subscription_bus, plain.rate_limit_store, plain.event_store) == (None,) * 3
    assert plain.resumable is False
    resumable = http_options(build_parser().parse_args(["run", "x:app", "--http", "--resumable"]))
    assert resumable.resumable is True


def test_workers_and_redis_need_http(capsys: pytest.CaptureFixture[str]) -> None:
    """--workers over stdio is a usage error, before the target is even loaded."""
    assert main(["run", "no_such_module:app", "--workers", "2"]) == 2
    assert "apply to --http only" in capsys.readouterr().err


def test_a_bad_worker_count_is_a_usage_error(tmp_path: Path) -> None:
    """--workers 0 is reported as one usage line."""
    target = tmp_path / "one.py"
    target.write_text("from mcpfusion import Fusion\napp = Fusion('one')\n")
    args = build_parser().parse_args(["run", f"{target}:app", "--http", "--workers", "0"])
    with pytest.raises(UsageError, match="workers must be at least 1"):
        args.handler(args)


def test_run_http_refuses_several_workers() -> None:
    """An app object cannot be rebuilt in other processes: run_http says to use a factory."""
    with pytest.raises(ValueError, match="workers > 1 needs a factory"):
        run_http(Fusion("x"), workers=2)


def test_run_workers_refuses_a_factory_that_names_nothing() -> None:
    """A factory string is 'module:attr'."""
    with pytest.raises(ValueError, match="an app factory is 'module:attr'"):
        run_workers("no-colon", workers=2)


def test_options_for_workers_pickle() -> None:
    """Options reach each worker pickled: identities and the Redis parts survive it."""
    identity = Identity("alice", scopes={"a"}, claims={"iss": "x"}, tenant="t")
    assert pickle.loads(pickle.dumps(identity)) == identity
    store = RedisEventStore(NOWHERE, ttl=7)
    options = HttpOptions(
        workers=2,
        event_store=store,
        subscription_bus=RedisSubscriptionBus(NOWHERE, channel="c"),
        rate_limit_store=RedisRateLimitStore(NOWHERE, prefix="p"),
    )
    copy = pickle.loads(pickle.dumps(options))
    assert copy.workers == 2
    assert (copy.event_store.ttl, copy.subscription_bus.channel) == (7, "c")
    assert copy.rate_limit_store.prefix == "p"


# -- subscriptions/listen ----------------------------------------------------------------------


def test_build_server_listens_on_the_bus_it_is_given() -> None:
    """subscriptions/listen is always served: on the given bus, else on one in memory."""
    app = Fusion("x")
    bus = RedisSubscriptionBus(NOWHERE)
    with_bus = build_server(app, subscription_bus=bus)
    without = build_server(app)
    assert with_bus.get_request_handler("subscriptions/listen") is not None
    assert without.get_request_handler("subscriptions/listen") is not None
    hubs = hub_of(with_bus), hub_of(without)
    assert hubs[0] is not None and hubs[0].bus is bus
    assert hubs[1] is not None and isinstance(hubs[1].bus, InMemorySubscriptionBus)


def test_mcpfusion_events_cross_the_redis_bus_with_their_fields() -> None:
    """A tenant's update, a tenant's list change and a state change keep their fields."""
    events: list[ResourceUpdated | ToolsListChanged | PromptsListChanged] = [
        TenantResourceUpdated(uri="billing://invoices/INV-1", tenant="t1"),
        TenantToolsListChanged(tenant="t2"),
        TenantPromptsListChanged(tenant="t3"),
        StateChanged("mcpfusion-state:billing.*", ("billing.*",), "t1", 12345),
        ResourceUpdated("x://a"),
    ]
    assert [decode_event(encode_event(event)) for event in events] == events


@pytest.mark.parametrize(
    "event",
    [ToolsListChanged(), PromptsListChanged(), ResourcesListChanged(), ResourceUpdated("a://b")],
)
def test_events_cross_redis_unchanged(event: Any) -> None:
    """Every event kind survives the bus's encoding; junk decodes to nothing."""
    assert decode_event(encode_event(event)) == event
    assert decode_event(b"not json") is None
    assert decode_event(b'{"kind": "resource"}') is None


# -- Redis unreachable: nothing waits, one warning --------------------------------------------


async def test_redis_down_fails_open_and_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    """Limits pass, events drop and streams are not stored, with one warning per part."""
    caplog.set_level(logging.INFO, "mcpfusion")
    limits = RedisRateLimitStore(NOWHERE)
    bus = RedisSubscriptionBus(NOWHERE)
    store = RedisEventStore(NOWHERE)
    async with limits, bus, store:
        with anyio.fail_after(10):
            for _ in range(20):
                assert await limits.take("k", 1.0, 1) == 0.0
                await bus.publish(ToolsListChanged())
                event_id = await store.store_event("s", None)
                assert event_id == "s:lost"

                async def never(event: EventMessage) -> None:
                    raise AssertionError("nothing to replay")

                assert await store.replay_events_after(event_id, never) is None
    assert bus.dropped == 20
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 3, warnings
    assert any("rate limits are not enforced" in w for w in warnings)
    assert any("server events are dropped" in w for w in warnings)
    assert any("SSE streams are not resumable" in w for w in warnings)


# -- the serving rate-limit store ----------------------------------------------------------------


class Counting(MemoryRateLimitStore):
    """A memory store that counts the tokens taken from it."""

    def __init__(self) -> None:
        super().__init__()
        self.taken = 0

    async def take(self, key: str, rate: float, burst: int) -> float:
        self.taken += 1
        return await super().take(key, rate, burst)


async def test_rate_limit_without_a_store_uses_the_serving_one() -> None:
    """rate_limit() takes from HttpOptions.rate_limit_store while a server runs; a store
    given to the middleware is kept."""
    app = Fusion("x")
    app.middleware(rate_limit(rate=100, burst=100))
    own = Counting()
    app.middleware(rate_limit(rate=100, burst=100, store=own))
    app.tool("t", exposition="flat").action("a")(lambda: "ok")
    serving = Counting()
    async with FusionTester(app) as tester:
        await tester.call("t_a")
        token = SERVING_STORE.set(serving)
        try:
            await tester.call("t_a")
        finally:
            SERVING_STORE.reset(token)
    assert (serving.taken, own.taken) == (1, 2)


# -- per-session event scopes ------------------------------------------------------------------


class MemoryEventStore(EventStore):
    """The simplest event store: a list, event ids are positions."""

    def __init__(self) -> None:
        self.events: list[tuple[str, JSONRPCMessage | None]] = []

    async def store_event(self, stream_id: str, message: JSONRPCMessage | None) -> str:
        self.events.append((stream_id, message))
        return str(len(self.events) - 1)

    async def replay_events_after(self, last_event_id: str, send_callback: Any) -> str | None:
        stream = self.events[int(last_event_id)][0]
        for index, (stream_id, message) in enumerate(self.events):
            if index > int(last_event_id) and stream_id == stream and message is not None:
                await send_callback(EventMessage(message, str(index)))
        return stream


def _note(n: int) -> JSONRPCMessage:
    return JSONRPCNotification(jsonrpc="2.0", method="notifications/progress", params={"n": n})


async def test_sessions_keep_their_own_streams_and_events() -> None:
    """Request 1 of two sessions are two streams; a session replays only its own ids."""
    store = MemoryEventStore()
    a, b = SessionScoped(store, "aaa"), SessionScoped(store, "bbb")
    first = await a.store_event("1", None)
    await a.store_event("1", _note(1))
    await b.store_event("1", _note(2))
    await a.store_event("1", JSONRPCResponse(jsonrpc="2.0", id=1, result={}))
    assert {stream for stream, _ in store.events} == {"aaa/1", "bbb/1"}
    replayed: list[EventMessage] = []

    async def collect(event: EventMessage) -> None:
        replayed.append(event)

    assert await a.replay_events_after(first, collect) == "1"
    assert [e.event_id for e in replayed] == ["aaa.1", "aaa.3"]
    replayed.clear()
    assert await b.replay_events_after(first, collect) is None
    assert replayed == []


@pytest.mark.parametrize("kind", [InMemoryEventStore, MemoryEventStore])
async def test_a_session_prefix_before_another_sessions_id_replays_nothing(
    kind: type[EventStore],
) -> None:
    """Another session's event id under a session's own prefix sends nothing, from a store
    that names an event's stream first and from one whose replay is held back; the
    session's own id still replays its stream."""
    store = kind()
    a, b = SessionScoped(store, "aaa"), SessionScoped(store, "bbb")
    first = await a.store_event("1", None)
    await a.store_event("1", _note(1))
    replayed: list[EventMessage] = []

    async def collect(event: EventMessage) -> None:
        replayed.append(event)

    assert await b.replay_events_after("bbb." + first.removeprefix("aaa."), collect) is None
    assert replayed == []
    assert await a.replay_events_after(first, collect) == "1"
    assert [e.message for e in replayed] == [_note(1)]


def test_redis_event_ids_name_their_stream() -> None:
    """A Redis event id names its stream (quoted) before its entry; a lost or malformed id
    names none."""
    store = RedisEventStore(NOWHERE)
    assert store.stream_of("aaa%2F1:1-0") == "aaa/1"
    for unknown in ("aaa%2F1:lost", "no-entry", ":1-0"):
        assert store.stream_of(unknown) is None


async def test_the_in_memory_store_replays_a_stream_after_an_id() -> None:
    """Replay sends the same stream's messages after the id (not priming events, not other
    streams); an unknown or dropped id replays nothing; the oldest events go first."""
    store = InMemoryEventStore(max_events=4)
    priming = await store.store_event("1", None)
    await store.store_event("1", _note(1))
    await store.store_event("2", _note(2))
    await store.store_event("1", _note(3))
    replayed: list[EventMessage] = []

    async def collect(event: EventMessage) -> None:
        replayed.append(event)

    assert await store.replay_events_after(priming, collect) == "1"
    assert [e.event_id for e in replayed] == ["2", "4"]
    assert [e.message for e in replayed] == [_note(1), _note(3)]
    for unknown in ("99", "x", "-1", "\uff11"):
        assert await store.replay_events_after(unknown, collect) is None
    await store.store_event("3", _note(4))  # the fifth: the priming event is dropped
    assert len(store) == 4
    assert await store.replay_events_after(priming, collect) is None
    with pytest.raises(ValueError, match="max_events must be a positive int"):
        InMemoryEventStore(max_events=0)


def test_resumable_serving_keeps_events_in_memory() -> None:
    """resumable=True gives the session manager an in-memory store and the retry interval;
    a given store is used as it is."""
    app = Fusion("x")

    def manager(**changes: Any) -> Any:
        route: Any = asgi_app(app, hot_path=False, **changes).routes[0]
        return route.endpoint.app.session_manager  # RequestGuard -> StreamableHTTPASGIApp

    found = manager(resumable=True, sse_retry=0.5)
    assert isinstance(found.event_store, InMemoryEventStore)
    assert found.retry_interval == 500
    given = MemoryEventStore()
    assert manager(event_store=given).event_store is given
    plain = manager()
    assert (plain.event_store, plain.retry_interval) == (None, None)


async def test_the_session_manager_gives_each_session_its_scope() -> None:
    """The SDK transport reads its store from the attribute the manager sets (pinned)."""
    store = MemoryEventStore()
    manager = SessionManager(app=build_server(Fusion("x")), event_store=store)
    transport = manager._admit_session(None)
    assert transport is not None
    scoped = transport._event_store
    assert isinstance(scoped, SessionScoped)
    assert (scoped.store, scoped.session_id) == (store, transport.mcp_session_id)
    unscoped = SessionManager(app=build_server(Fusion("x")))._admit_session(None)
    assert unscoped is not None
    assert unscoped._event_store is None


async def test_a_redis_operation_is_cut_at_the_call_wait() -> None:
    """An operation Redis never answers fails as a TimeoutError after CALL_WAIT, which the
    parts count as Redis being unreachable."""
    link = _Link("redis://127.0.0.1:1/0", "tested")

    async def unanswered(client: Any) -> None:
        await anyio.sleep_forever()

    with anyio.fail_after(30), pytest.raises(TimeoutError, match=f"within {CALL_WAIT:g} s"):
        await link.run(unanswered)


def test_after_a_backoff_one_operation_tries_redis_and_the_others_skip() -> None:
    """Once an outage's backoff has passed, the first operation probes Redis; the others
    skip it while it waits, so a paused Redis holds one call, not every call."""
    link = _Link("redis://127.0.0.1:1/0", "tested")
    link.failed(ConnectionError("refused"))
    assert not link.available()
    link._retry_at = 0.0  # the backoff has passed
    assert [link.available(), link.available()] == [True, False]
