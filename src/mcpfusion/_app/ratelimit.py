"""The rate-limit middleware: a token bucket per identity, in a store that may be shared."""

from __future__ import annotations

import contextvars
import math
import time
from collections.abc import Callable
from typing import Final, Protocol, runtime_checkable

from mcpfusion._app.middleware import Call, Middleware, Next, contained
from mcpfusion._errors import DefinitionError
from mcpfusion._present.failures import from_exception, rate_limited
from mcpfusion._present.response import ToolResponse
from mcpfusion._tools.caller_state import identity_key

MEMORY_BUCKETS: Final = 100_000
"""The in-memory store forgets the least recently used buckets beyond this many."""


@runtime_checkable
class RateLimitStore(Protocol):
    """Where token buckets live: this process's memory, or a store servers share."""

    async def take(self, key: str, rate: float, burst: int) -> float:
        """Takes one token from ``key``'s bucket.

        A bucket holds at most ``burst`` tokens and gains ``rate`` tokens a second.

        Returns:
            ``0`` when a token was taken; else the seconds until one will be there.
        """
        ...


SERVING_STORE: contextvars.ContextVar[RateLimitStore | None] = contextvars.ContextVar(
    "mcpfusion_rate_limit_store", default=None
)
"""The store of the server serving the current request (``HttpOptions.rate_limit_store``)."""


class MemoryRateLimitStore:
    """Token buckets in this process's memory (each server process counts on its own)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        # Each bucket is its theoretical arrival time (GCRA, as the Redis store keeps it):
        # one float, no tuple to make per call. A dict keeps insertion order: popping and
        # re-inserting a key makes it the most recently used, so the first key is the one
        # to forget.
        self._buckets: dict[str, float] = {}

    async def take(self, key: str, rate: float, burst: int) -> float:
        """Takes one token from ``key``'s bucket; see ``RateLimitStore.take``."""
        return self.take_now(key, rate, burst)

    def take_now(self, key: str, rate: float, burst: int) -> float:
        """``take`` without awaiting: the middleware calls it so on this store.

        A call passes when ``now >= TAT + 1/rate - burst/rate`` and moves the TAT on by
        ``1/rate``: the token bucket of ``burst`` tokens gaining ``rate`` a second.
        """
        now = self._clock()
        buckets = self._buckets
        tat = buckets.pop(key, now)
        if tat < now:
            tat = now
        interval = 1 / rate
        # tat + interval - burst * interval - now, grouped so that a full bucket gives
        # exactly 0 or less: the other order rounds, refusing a first call (burst 1).
        wait = (tat - now) - (burst - 1) * interval
        buckets[key] = tat if wait > 0 else tat + interval  # a refused call takes nothing
        if len(buckets) > MEMORY_BUCKETS:
            del buckets[next(iter(buckets))]  # the least recently used: it starts full again
        return wait if wait > 0 else 0.0


def by_identity(call: Call) -> str:
    """The default bucket key: who vouched for the caller, its tenant and its subject.

    A subject names one caller only within its issuer and tenant: the API key of holder
    ``reader`` (an identity the app configured, without claims), an introspected token
    whose ``sub`` is ``reader`` (claims without ``iss``), a JWT's ``reader`` and the same
    ``sub`` in another tenant each get their own bucket. Anonymous callers share one.
    """
    return identity_key(call.identity)


def rate_limit(
    rate: float,
    burst: int,
    *,
    store: RateLimitStore | None = None,
    key: Callable[[Call], str] = by_identity,
) -> Middleware:
    """A middleware allowing each caller ``burst`` calls at once and ``rate`` a second after.

    A call over the limit is not run: the agent gets ``RATE_LIMITED`` with ``retry_after``,
    the whole seconds until its next call would pass.

    Args:
        rate: calls a second a caller regains.
        burst: the most calls a caller may make at once.
        store: where the buckets live. By default the serving options' store
            (``HttpOptions.rate_limit_store``, ``--redis-url``) when they name one, else a
            ``MemoryRateLimitStore()`` of this middleware's own.
        key: the bucket of a call (``by_identity`` by default).

    Raises:
        DefinitionError: on a rate or burst that is not positive.
    """
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not rate > 0:
        raise DefinitionError(f"rate is a positive number of calls a second; got {rate!r}")
    if isinstance(burst, bool) or not isinstance(burst, int) or burst < 1:
        raise DefinitionError(f"burst is a whole number of calls, at least 1; got {burst!r}")
    own = store if store is not None else MemoryRateLimitStore()
    shared = SERVING_STORE if store is None else None

    keyed_by_identity = key is by_identity  # then identity_key is called without a frame

    async def limit(call: Call, call_next: Next) -> ToolResponse:
        buckets = (shared.get() if shared is not None else None) or own
        try:
            bucket = identity_key(call.identity) if keyed_by_identity else key(call)
            if type(buckets) is MemoryRateLimitStore:  # no coroutine to await: 0.3 µs a call
                wait = buckets.take_now(bucket, rate, burst)
            else:
                wait = await buckets.take(bucket, rate, burst)
        except Exception as exc:  # a failing store or key function fails this call only
            return from_exception(exc, call.tool, call.action)
        if wait > 0:
            return from_exception(rate_limited(max(1, math.ceil(wait))), call.tool, call.action)
        return await call_next(call)

    return contained(limit)
