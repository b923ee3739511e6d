"""Callers' state in Redis, so every worker and replica reads the same (``--redis-url``)."""

from __future__ import annotations

from typing import Any, Self

import anyio
import redis.asyncio

from mcpfusion._serve.redis import shared_state as _shared_without_callers
from mcpfusion._serve.redis_link import _FAILURES, DEFAULT_PREFIX, _Link, _Pickled
from mcpfusion._serve.task_redis import RedisTaskStore


class CallerStateUnavailable(RuntimeError):
    """Redis could not be reached for a caller's state: the call fails (fails closed)."""


class RedisCallerStore(_Pickled):
    """A ``CallerStore`` in Redis: one hash per caller, each value a field; every write
    pushes the hash's expiry on to its ``ttl`` and never pulls it in (Redis 7).

    Unlike the rate-limit store this one fails closed: a workflow state that cannot be
    read must not open a gate, so while Redis is unreachable a call reading caller state
    fails (``INTERNAL_ERROR``) and the outage is logged once.

    Args:
        url: the Redis URL.
        prefix: the prefix of its keys (``mcpfusion:cs:<caller>``).
    """

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX) -> None:
        self._arguments = {"url": url, "prefix": prefix}
        self.prefix = prefix
        self._link = _Link(url, "caller state cannot be read or written")

    def _key(self, caller: str) -> str:
        return f"{self.prefix}:cs:{caller}"

    async def _run(self, operation: Any) -> Any:
        if not self._link.available():
            raise CallerStateUnavailable("caller state is unavailable: Redis is unreachable")
        try:
            result = await self._link.run(operation)
        except _FAILURES as exc:
            self._link.failed(exc)
            raise CallerStateUnavailable("caller state is unavailable: Redis failed") from exc
        self._link.succeeded()
        return result

    async def get(self, caller: str, name: str) -> str | None:
        """See ``CallerStore.get``."""

        async def read(client: redis.asyncio.Redis) -> Any:
            return await client.hget(self._key(caller), name)

        found = await self._run(read)
        if found is None:
            return None
        return found.decode("utf-8", "replace") if isinstance(found, bytes) else str(found)

    async def put(self, caller: str, name: str, value: str, ttl: float) -> None:
        """See ``CallerStore.put``."""
        key = self._key(caller)
        ms = max(1, int(ttl * 1000))

        async def write(client: redis.asyncio.Redis) -> Any:
            async with client.pipeline(transaction=True) as pipe:
                pipe.hset(key, name, value)
                # GT: a shorter ttl never cuts the life of the caller's other values.
                pipe.pexpire(key, ms, gt=True)
                pipe.pexpire(key, ms, nx=True)
                return await pipe.execute()

        await self._run(write)

    async def remove(self, caller: str, name: str) -> None:
        """See ``CallerStore.remove``."""

        async def delete(client: redis.asyncio.Redis) -> Any:
            return await client.hdel(self._key(caller), name)

        await self._run(delete)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        with anyio.CancelScope(shield=True):
            await self._link.aclose()


def shared_state(url: str, *, stateless: bool = False) -> dict[str, Any]:
    """The HTTP options that share a server's state through the Redis at ``url``.

    Events (``subscription_bus``), rate limits (``rate_limit_store``), callers' state and
    workflow states (``caller_store``), MCP tasks (``task_store``) and, for a stateful
    server, resumable streams (``event_store``): what ``mcpfusion run --redis-url`` sets.
    Pass them to ``HttpOptions(**shared_state(url))`` or ``app.run("http", ...)``.
    """
    shared = _shared_without_callers(url, stateless=stateless)
    shared["caller_store"] = RedisCallerStore(url)
    shared["task_store"] = RedisTaskStore(url)
    return shared
