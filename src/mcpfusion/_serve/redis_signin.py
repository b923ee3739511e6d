"""The sign-in facade's state in Redis: clients, codes and grants shared by every worker."""

from __future__ import annotations

import json
import time
from typing import Any

import redis.asyncio

from mcpfusion._auth.config import VerifierUnavailable
from mcpfusion._auth.signin.store import Record
from mcpfusion._serve.redis_link import _FAILURES, DEFAULT_PREFIX, _Link, _Pickled


class RedisSignInStore(_Pickled):
    """A ``SignInStore`` in Redis, for ``SignIn(store=...)`` across workers and replicas.

    Unlike events and rate limits, sign-in fails closed: while Redis is unreachable no
    client registers, no code is redeemed and no token verifies (503), since a revocation
    could not be seen. Codes and refresh tokens are stored by their hash; ``take`` is one
    ``GETDEL``, so a code is redeemed once even when two workers race with it.

    Args:
        url: the Redis URL.
        prefix: the prefix of its keys (``mcpfusion:signin:<kind>:<key>``).
    """

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX) -> None:
        self._arguments = {"url": url, "prefix": prefix}
        self.prefix = f"{prefix}:signin"
        self._link = _Link(url, "sign-in is refused")

    async def _run(self, operation: Any) -> Any:
        try:
            found = await self._link.run(operation)
        except _FAILURES as exc:
            self._link.failed(exc)
            raise VerifierUnavailable("the sign-in store (Redis) is unreachable") from exc
        self._link.succeeded()
        return found

    async def put(self, kind: str, key: str, value: Record, ttl: float) -> None:
        """Keeps ``value`` under ``kind`` and ``key`` for ``ttl`` seconds."""
        name, index = f"{self.prefix}:{kind}:{key}", f"{self.prefix}:{kind}"
        deadline = time.time() + ttl

        async def put(client: redis.asyncio.Redis) -> None:
            async with client.pipeline(transaction=True) as pipe:
                pipe.set(name, json.dumps(value), px=max(1, int(ttl * 1000)))
                pipe.zadd(index, {key: deadline})
                await pipe.execute()

        await self._run(put)

    async def get(self, kind: str, key: str) -> Record | None:
        """The value under ``kind`` and ``key``, or ``None`` (unknown or expired)."""
        name = f"{self.prefix}:{kind}:{key}"
        return _decoded(await self._run(lambda client: client.get(name)))

    async def take(self, kind: str, key: str) -> Record | None:
        """The value under ``kind`` and ``key``, deleted; ``None`` if there was none."""
        name, index = f"{self.prefix}:{kind}:{key}", f"{self.prefix}:{kind}"

        async def take(client: redis.asyncio.Redis) -> Any:
            async with client.pipeline(transaction=True) as pipe:
                pipe.getdel(name)
                pipe.zrem(index, key)
                return (await pipe.execute())[0]

        return _decoded(await self._run(take))

    async def count(self, kind: str) -> int:
        """How many live entries of ``kind`` there are."""
        index = f"{self.prefix}:{kind}"

        async def count(client: redis.asyncio.Redis) -> Any:
            async with client.pipeline(transaction=True) as pipe:
                pipe.zremrangebyscore(index, "-inf", time.time())
                pipe.zcard(index)
                return (await pipe.execute())[1]

        return int(await self._run(count))

    async def __aenter__(self) -> RedisSignInStore:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._link.aclose()


def _decoded(raw: Any) -> Record | None:
    if raw is None:
        return None
    found = json.loads(raw)
    return found if isinstance(found, dict) else None
