"""One Redis connection per part, with the backoff every Redis-backed store shares."""

from __future__ import annotations

import functools
import logging
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import anyio
import redis.asyncio
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

__all__ = ["CALL_WAIT", "DEFAULT_PREFIX", "FIRST_BACKOFF", "LAST_BACKOFF"]

logger = logging.getLogger("mcpfusion")

DEFAULT_PREFIX: Final = "mcpfusion"
FIRST_BACKOFF: Final = 0.1
LAST_BACKOFF: Final = 5.0
CALL_WAIT: Final = 0.5
"""The longest a tool call waits on each part it uses (a rate-limit check, an event
published, a stream event stored), so 1.5 s at most; past it the operation fails as it
would on a Redis that is down."""
_FAILURES = (RedisError, OSError)  # OSError holds TimeoutError, CALL_WAIT's too
_T = TypeVar("_T")


class _Link:
    """One Redis connection pool, and what this process knows of the server's health.

    After a failure, Redis is not asked again before the backoff has passed (0.1 s,
    doubling to 5 s), so no call waits on a server that is down; the first failure of an
    outage is logged as a warning, the first success after it as one info line.
    """

    def __init__(self, url: str, part: str) -> None:
        self.url = url
        self.part = part
        self._client: redis.asyncio.Redis | None = None
        self._down = False
        self._retry_at = 0.0
        self._backoff = FIRST_BACKOFF
        self._recovered_at = float("-inf")

    @property
    def client(self) -> redis.asyncio.Redis:
        if self._client is None:
            # One immediate retry inside redis-py, on a new connection: a pooled connection
            # from before a restart fails once. The backoff here decides the rest.
            self._client = redis.asyncio.Redis.from_url(
                self.url,
                socket_connect_timeout=1.0,
                socket_timeout=5.0,
                retry=Retry(NoBackoff(), 1),
            )
        return self._client

    async def run(self, operation: Callable[[redis.asyncio.Redis], Awaitable[_T]]) -> _T:
        """``operation`` on the client, for at most ``CALL_WAIT`` seconds.

        The socket timeout (5 s, for the blocking reads of a resumed stream) would hold a
        call on a Redis that answers nothing; cut here, redis-py drops the connection.
        """
        with anyio.move_on_after(CALL_WAIT):
            return await operation(self.client)
        raise TimeoutError(f"no answer within {CALL_WAIT:g} s")

    def available(self) -> bool:
        """Whether to try Redis now (always, unless a failure's backoff is running).

        Once a backoff has passed, the first operation tries Redis and the others skip it
        while that one waits: a paused Redis holds one call at a time, not all of them.
        """
        if not self._down:
            return True
        now = time.monotonic()
        if now < self._retry_at:
            return False
        self._retry_at = now + CALL_WAIT
        return True

    def failed(self, exc: BaseException, connected_at: float | None = None) -> None:
        """Records a failure; ``connected_at``: when the failed connection was opened.

        A connection opened before Redis was last back broke in that outage, noticed
        late (a subscriber reads only now and then): it is reopened, with no new warning.
        """
        if connected_at is not None and connected_at < self._recovered_at and not self._down:
            return
        if not self._down:
            logger.warning(
                "Redis at %s is unreachable (%s: %s): %s until it is back",
                _safe(self.url),
                type(exc).__name__,
                exc,
                self.part,
            )
            self._down = True
            self._backoff = FIRST_BACKOFF
        else:
            self._backoff = min(LAST_BACKOFF, self._backoff * 2)
        self._retry_at = time.monotonic() + self._backoff

    def succeeded(self) -> None:
        if self._down:
            self._down = False
            self._recovered_at = time.monotonic()
            logger.info("Redis at %s is back (%s)", _safe(self.url), self.part.split(",")[0])

    @property
    def down(self) -> bool:
        return self._down

    @property
    def backoff(self) -> float:
        return self._backoff

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


def _safe(url: str) -> str:
    """The URL without its password, for logs."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname}" + (
        f":{parts.port}" if parts.port else ""
    )
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


class _Pickled:
    """Pickles as the constructor's arguments: each process opens its own connections."""

    _arguments: dict[str, Any]

    def __reduce__(self) -> tuple[Any, ...]:
        return (functools.partial(type(self), **self._arguments), ())
