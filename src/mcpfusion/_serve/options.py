"""How an app is served over HTTP: one frozen value, used by ``Fusion``, the server and the CLI."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from mcpfusion._app.ratelimit import RateLimitStore
from mcpfusion._auth.config import Auth
from mcpfusion._auth.signin.config import SignIn
from mcpfusion._tasks.store import TaskStore
from mcpfusion._tools.caller_state import CallerStore

DEFAULT_MAX_BODY_BYTES: Final = 4 * 1024 * 1024
"""The MCP SDK's own default request body limit (4 MiB)."""

MIN_STATE_KEY_BYTES: Final = 32
"""The shortest request-state key the MCP SDK's sealing accepts (32 bytes of randomness)."""

DEFAULT_MAX_HEAD_BYTES: Final = 64 * 1024
"""The default bound on a request head, request line and headers (64 KiB)."""

DEFAULT_MAX_HEADERS: Final = 100
"""The default bound on the header fields of a request (Apache's ``LimitRequestFields``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpOptions:
    """The options of serving an app over streamable HTTP.

    Example: ``app.run("http", HttpOptions(port=8080, stateless=True))``, or the same as
    keywords, ``app.run("http", port=8080, stateless=True)``.

    Attributes:
        host: the bind address. Loopback (``127.0.0.1``, ``::1``, ``localhost``, any of
            127.0.0.0/8) turns DNS-rebinding protection on.
        port: the port; ``0`` picks a free one.
        path: the endpoint path.
        stateless: no sessions, every request stands alone (several workers, load
            balancers).
        json_response: answer with one JSON body instead of an SSE stream (progress
            notifications are then dropped).
        hot_path: answer a session's ``tools/call`` and ``tools/list`` without the SDK's
            per-request stream: one JSON body unless the handler sends a notification
            (docs/deployment.md, "The HTTP hot path"). ``False``: the SDK answers all.
        allowed_hosts: ``Host`` header values to accept (``"name:*"`` for any port); they
            switch DNS-rebinding protection on for any bind address.
        allowed_origins: ``Origin`` header values to accept (default: ``http://`` and
            ``https://`` on each allowed host).
        cors_origins: origins of browser clients allowed across origins (CORS): preflight
            requests for the MCP headers (2026-07-28's ``Mcp-Method``, ``Mcp-Name`` and
            ``Mcp-Param-*`` included) are answered, and ``Mcp-Session-Id``,
            ``Mcp-Protocol-Version`` and ``WWW-Authenticate`` exposed; they are allowed
            origins too.
        max_body_bytes: larger requests get HTTP 413 before they are parsed.
        body_timeout: seconds a whole request body may take to arrive (then 408), however
            it trickles in.
        max_batch_size: messages one JSON-RPC batch may hold (default 100); a larger batch
            is refused whole (-32600). Batches exist on protocol 2025-03-26 only.
        header_timeout: seconds a request head may take once started; a slower connection
            is closed (slowloris).
        max_head_bytes: bytes a request head (request line and headers) may take; a larger
            one gets HTTP 431 and its connection is closed, before any check or handler
            reads it.
        max_headers: header fields a request may carry; more get HTTP 431 (as above).
        keep_alive_timeout: seconds an idle keep-alive connection is kept open.
        max_sessions: open stateful sessions at most; the next one gets 503.
        max_sessions_per_credential: open stateful sessions one verified credential may
            hold (default 100), so one tenant cannot lock the others out; the next one gets
            503. Anonymous sessions are bounded by ``max_sessions`` only.
        session_idle_timeout: seconds after which an idle stateful session is closed.
        log_level: uvicorn's log level when ``Fusion.run`` serves.
        access_log: whether uvicorn logs a line per HTTP request. Off by default: an MCP
            server answers one path, the ``audit_log`` middleware is the record of each
            call, and the line cost 15 % of a served call's time.
        auth: HTTP authorization (``mcpfusion.auth.Auth``): every request needs a valid
            bearer token, and calls carry the identity it proves. ``None``: anonymous.
        signin: sign-in with an OpenID provider (``mcpfusion.auth.SignIn``): the server
            also becomes the OAuth authorization server MCP clients register with and get
            tokens from, and ``auth`` accepts those tokens (docs/security.md, "Sign-in").
            Exclusive with ``auth``.
        workers: server processes sharing the socket (``mcpfusion.server.run_workers``);
            each runs the app's lifespan once. A stateful server runs one worker: a
            session lives in the process that opened it.
        shutdown_timeout: seconds calls in flight may take to finish after SIGTERM or
            SIGINT (new connections are refused meanwhile); then they are cancelled.
        subscription_bus: the MCP SDK ``SubscriptionBus`` that ``subscriptions/listen``
            streams are fed from (``mcpfusion.redis.RedisSubscriptionBus`` to reach the
            listeners of every replica). ``None``: the request is not served.
        event_store: the MCP SDK ``EventStore`` that makes a stateful session's SSE streams
            resumable with ``Last-Event-ID`` (``mcpfusion.redis.RedisEventStore``); each
            session reads only its own events. Stateful servers only.
        resumable: makes SSE streams resumable without a shared store: events are kept in
            this process's memory (``mcpfusion.server.InMemoryEventStore``, the last 10,000)
            unless ``event_store`` is given. Stateful servers only.
        sse_retry: seconds a client waits before reconnecting to a resumable stream that
            dropped or that a handler closed (``ctx.close_sse_stream()``); sent as the SSE
            ``retry`` field when streams are resumable.
        rate_limit_store: where ``rate_limit`` middleware created without ``store=`` keeps
            its buckets while this server runs (``mcpfusion.redis.RedisRateLimitStore`` to
            share limits between replicas). ``None``: each process counts on its own.
        caller_store: where ``ctx.caller_state`` and workflow states live while this
            server runs (``mcpfusion.redis.RedisCallerStore`` to share them between
            workers and replicas). ``None``: the app's memory, per process.
        request_state_keys: secrets (at least 32 bytes each, e.g. ``secrets.token_hex(32)``)
            sealing the ``requestState`` of 2026-07-28 ``input_required`` rounds, so that
            any replica holding them accepts the next round: the first seals, every one
            unseals (rotation). Empty: a key made by the process (``run_workers`` makes one
            and hands it to its workers). Never shown in the options' ``repr``.
        task_store: where MCP tasks live (``mcpfusion.redis.RedisTaskStore`` to read,
            answer and cancel any task from any worker or replica; a cancel stops the call
            wherever it runs). ``None``: this process's memory.
        task_queue: run tasks' calls on ``mcpfusion worker`` processes, through a queue
            in the Redis of ``task_store`` (a ``RedisTaskStore``), instead of in the web
            workers (docs/tasks.md, "Across workers").

    Stores and buses that are async context managers are entered around serving, once
    per worker.

    Raises:
        TypeError, ValueError: on an option of the wrong type or out of range.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    stateless: bool = False
    json_response: bool = False
    hot_path: bool = True
    allowed_hosts: Sequence[str] | None = None
    allowed_origins: Sequence[str] | None = None
    cors_origins: Sequence[str] = ()
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    body_timeout: float = 30.0
    max_batch_size: int = 100
    header_timeout: float = 10.0
    max_head_bytes: int = DEFAULT_MAX_HEAD_BYTES
    max_headers: int = DEFAULT_MAX_HEADERS
    keep_alive_timeout: int = 5
    max_sessions: int = 1_000
    max_sessions_per_credential: int = 100
    session_idle_timeout: float = 600.0
    log_level: str = "info"
    access_log: bool = False
    auth: Auth | None = None
    signin: SignIn | None = None
    workers: int = 1
    shutdown_timeout: float = 30.0
    # The MCP SDK's types, checked by their methods: the options never load the SDK.
    subscription_bus: Any = None
    event_store: Any = None
    rate_limit_store: RateLimitStore | None = None
    caller_store: CallerStore | None = None
    resumable: bool = False
    sse_retry: float = 1.0
    request_state_keys: Sequence[str] = field(default=(), repr=False)
    task_store: TaskStore | None = None
    task_queue: bool = False

    def __post_init__(self) -> None:
        _require(self.host, str, "host")
        if not self.host:
            raise ValueError("host cannot be empty")
        _require(self.port, int, "port")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be 0-65535; got {self.port}")
        _require(self.path, str, "path")
        if not self.path.startswith("/"):
            raise ValueError(f"path must start with '/'; got {self.path!r}")
        _require(self.stateless, bool, "stateless")
        _require(self.json_response, bool, "json_response")
        _require(self.hot_path, bool, "hot_path")
        for name in ("allowed_hosts", "allowed_origins", "cors_origins"):
            values = getattr(self, name)
            if values is None:
                continue
            if isinstance(values, str) or not all(isinstance(v, str) for v in values):
                raise TypeError(f"{name} is a list of str")
            object.__setattr__(self, name, tuple(values))
        for name in (
            "max_body_bytes",
            "max_head_bytes",
            "max_headers",
            "keep_alive_timeout",
            "max_sessions",
        ):
            _require(getattr(self, name), int, name)
        for name in ("body_timeout", "header_timeout", "session_idle_timeout"):
            _require(getattr(self, name), int | float, name)
        for name in (
            "max_body_bytes",
            "max_head_bytes",
            "max_headers",
            "body_timeout",
            "header_timeout",
            "keep_alive_timeout",
            "max_sessions",
            "session_idle_timeout",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive; got {getattr(self, name)}")
        _require(self.log_level, str, "log_level")
        _require(self.access_log, bool, "access_log")
        if self.auth is not None:
            _require(self.auth, Auth, "auth")
        if self.signin is not None:
            _require(self.signin, SignIn, "signin")
            if self.auth is not None:
                raise ValueError("pass auth or signin, not both: signin sets the auth itself")
            if isinstance(self.workers, int) and self.workers > 1 and not self.signin.signing_key:
                raise ValueError(
                    "signin with several workers needs a signing_key shared by them (and a "
                    "shared store, mcpfusion.redis.RedisSignInStore)"
                )
        _require(self.workers, int, "workers")
        if self.workers < 1:
            raise ValueError(f"workers must be at least 1; got {self.workers}")
        _require(self.shutdown_timeout, int | float, "shutdown_timeout")
        if not self.shutdown_timeout >= 0:
            raise ValueError(f"shutdown_timeout must be 0 or more; got {self.shutdown_timeout}")
        _duck(self.subscription_bus, "subscription_bus", "publish", "subscribe")
        _duck(self.event_store, "event_store", "store_event", "replay_events_after")
        if self.event_store is not None and self.stateless:
            raise ValueError("event_store needs sessions: a stateless server has none to resume")
        _require(self.resumable, bool, "resumable")
        if self.resumable and self.stateless:
            raise ValueError("resumable needs sessions: a stateless server has none to resume")
        _require(self.sse_retry, int | float, "sse_retry")
        if not 0 < self.sse_retry <= 3600:
            raise ValueError(f"sse_retry must be in (0, 3600] seconds; got {self.sse_retry}")
        if self.rate_limit_store is not None:
            _require(self.rate_limit_store, RateLimitStore, "rate_limit_store")
        if self.caller_store is not None:
            _require(self.caller_store, CallerStore, "caller_store")
        _duck(self.task_store, "task_store", "create", "get", "update", "request_cancel")
        _require(self.task_queue, bool, "task_queue")
        if self.task_queue and not isinstance(getattr(self.task_store, "url", None), str):
            raise ValueError(
                "task_queue needs a task_store in Redis (mcpfusion.redis.RedisTaskStore), "
                "whose Redis carries the queue"
            )
        _positive_int(self, "max_batch_size")
        _positive_int(self, "max_sessions_per_credential")
        keys = self.request_state_keys
        if isinstance(keys, str) or not all(isinstance(k, str) for k in keys):
            raise TypeError("request_state_keys is a list of str")
        for index, key in enumerate(keys):
            # Only the length is named: the message may reach a log, the key must not.
            if not key.isprintable():  # no control character, no lone surrogate
                raise ValueError(f"request_state_keys[{index}] has a character not printable")
            size = len(key.encode())
            if size < MIN_STATE_KEY_BYTES:
                raise ValueError(
                    f"request_state_keys[{index}] is {size} bytes; a key is at least "
                    f"{MIN_STATE_KEY_BYTES} (make one with secrets.token_hex(32))"
                )
        if len(set(keys)) != len(keys):
            raise ValueError("request_state_keys holds the same key twice")
        object.__setattr__(self, "request_state_keys", tuple(keys))


def _positive_int(options: HttpOptions, name: str) -> None:
    value = getattr(options, name)
    _require(value, int, name)
    if value < 1:
        raise ValueError(f"{name} must be positive; got {value}")


def _require(value: Any, kind: Any, name: str) -> None:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        what = getattr(kind, "__name__", "number")
        raise TypeError(f"{name} must be a {what}; got {value!r}")


def _duck(value: Any, name: str, *methods: str) -> None:
    """Checks an SDK seam by its methods, so the options never import the SDK."""
    if value is not None and not all(callable(getattr(value, m, None)) for m in methods):
        raise TypeError(f"{name} must have {' and '.join(methods)}; got {value!r}")


def http_options(options: HttpOptions | None, changes: dict[str, Any]) -> HttpOptions:
    """``options`` (default ``HttpOptions()``) with the named fields changed.

    Raises:
        TypeError: on a name that is not an option.
    """
    return dataclasses.replace(options or HttpOptions(), **changes)
