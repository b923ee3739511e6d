"""Task state in Redis, so any worker or replica reads and steers any task (``--redis-url``)."""

from __future__ import annotations

import base64
import builtins
import contextlib
import dataclasses
import hashlib
import json
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Final, Self, Unpack, get_args

import anyio
import redis.asyncio
from redis.exceptions import WatchError

from mcpfusion._serve.redis import RedisSubscriptionBus
from mcpfusion._serve.redis_link import _FAILURES, DEFAULT_PREFIX, _Link, _Pickled
from mcpfusion._tasks.store import MemoryTaskStore, TaskChange, TaskRecord, TaskStatus

_FIELDS: Final = tuple(field.name for field in dataclasses.fields(TaskRecord))
_STATUSES: Final = frozenset(get_args(TaskStatus))
_PAGE: Final = 50
_HELD_MS: Final = 86_400_000
ABANDONED: Final = "the worker running the task stopped before it ended"
"""The message of a task failed because the process running it died (in web or queue
workers alike)."""
MAX_ID: Final = 128
"""The longest task id looked up: ids are 22 characters, and a client's is hostile."""

# Creation is one script: the id is checked, the record stored and indexed by its owner in
# one step. The owner's index lives as long as its longest-lived task (GT never shortens
# it; a task kept forever keeps it forever).
_CREATE: Final = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local fresh = redis.call('EXISTS', KEYS[2]) == 0
if ARGV[2] == '' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
if ARGV[2] == '' then
  redis.call('PERSIST', KEYS[2])
elseif fresh then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
else
  redis.call('PEXPIRE', KEYS[2], ARGV[2], 'GT')
end
return 1
"""


class TaskStoreUnavailable(RuntimeError):
    """Redis could not be reached for a task's state: the request fails (fails closed)."""


class RedisTaskStore(_Pickled):
    """A ``TaskStore`` in Redis: a task made through one worker is read, answered and
    cancelled through any other, and runs on whichever process a queue hands it to.

    Each task is one key holding its record as JSON, with a Redis expiry of its
    ``ttl_ms`` from its last change; each owner has a sorted set of its tasks for
    ``list``. A transition is one optimistic transaction (``WATCH``, then ``MULTI``): the
    rules are ``MemoryTaskStore``'s, applied to the one record read, so a task that
    reached a terminal status never changes again, whichever worker writes last.

    A web worker running a task's call holds a lease on it (``holding``): if that process
    is killed, the next read of the task through any worker fails it, ``lease`` seconds
    on, so no task is left ``working`` by a dead process.

    A cancel is published on a channel as it is stored: the worker running the task (a
    web worker, or a queue worker) stops its handler at once (``watch_cancel``). Pub/sub
    rather than polling, because every running task would otherwise read Redis each
    second; a cancel missed while a worker reconnects still holds, since the worker's
    result is refused by the cancelled record.

    Like the caller store it fails closed: while Redis is unreachable every method
    raises ``TaskStoreUnavailable`` and the outage is logged once. Serving enters the
    store (``async with``), which starts its cancel listener.

    Args:
        url: the Redis URL.
        prefix: the prefix of its keys (``mcpfusion:task:<id>``,
            ``mcpfusion:tasks:<owner hash>``) and of its channel
            (``mcpfusion:tasks:cancel``).
        clock: seconds since the epoch, for the records' timestamps and their expiry
            (tests pass a fake one; Redis's own expiry then only tidies up).
        lease: seconds a task run in a web worker stays ``working`` once that process
            stopped renewing it (killed): then it is failed (``holding``, ``get``).
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        clock: Callable[[], float] = time.time,
        lease: float = 15.0,
    ) -> None:
        if not lease > 0:
            raise ValueError(f"lease must be positive; got {lease}")
        self._arguments = {"url": url, "prefix": prefix, "clock": clock, "lease": lease}
        self.url = url
        self.lease = lease
        self.prefix = prefix
        self.channel = f"{prefix}:tasks:cancel"
        self._clock = clock
        self._link = _Link(url, "tasks cannot be read or written")
        self._cancels = _CancelBus(url, channel=self.channel)
        self._create: Any = None

    # -- keys and records ---------------------------------------------------------------

    def _key(self, task_id: str) -> str:
        return f"{self.prefix}:task:{task_id}"

    def _index(self, owner: str | None) -> str:
        # Hashed: an owner is the caller's principal, any text, and keys stay short.
        name = "anonymous" if owner is None else hashlib.sha256(owner.encode()).hexdigest()
        return f"{self.prefix}:tasks:{name}"

    def _lifetime(self, record: TaskRecord) -> int | None:
        """Milliseconds Redis keeps ``record`` (``None``: until deleted)."""
        if record.expires_at is None:
            return None
        return max(1, int((record.expires_at - self._clock()) * 1000))

    def _live(self, raw: bytes | str | None) -> TaskRecord | None:
        if raw is None:
            return None
        record = _decoded(raw)
        expires_at = record.expires_at
        if expires_at is not None and expires_at <= self._clock():
            return None
        return record

    async def _run(self, operation: Callable[[redis.asyncio.Redis], Awaitable[Any]]) -> Any:
        if not self._link.available():
            raise TaskStoreUnavailable("task state is unavailable: Redis is unreachable")
        try:
            result = await self._link.run(operation)
        except _FAILURES as exc:
            self._link.failed(exc)
            raise TaskStoreUnavailable("task state is unavailable: Redis failed") from exc
        self._link.succeeded()
        return result

    async def _transition(
        self,
        task_id: str,
        change: Callable[[MemoryTaskStore], Awaitable[TaskRecord | None]],
        *,
        announce: bool = False,
    ) -> TaskRecord | None:
        """Applies ``change`` to the live record of ``task_id`` in one transaction.

        ``change`` runs on a ``MemoryTaskStore`` holding that record alone, on this
        store's clock: its answer is what is stored and returned. ``announce`` publishes
        the task's id on the cancel channel in the same transaction.
        """
        if len(task_id) > MAX_ID:
            return None
        key = self._key(task_id)

        async def transact(client: redis.asyncio.Redis) -> TaskRecord | None:
            async with client.pipeline(transaction=True) as pipe:
                while True:
                    try:
                        await pipe.watch(key)
                        before = self._live(await pipe.get(key))
                        if before is None:
                            return None
                        scratch = MemoryTaskStore(clock=self._clock)
                        await scratch.create(before)
                        after = await change(scratch)
                        if after is None or after == before:
                            return after
                        lifetime = self._lifetime(after)
                        index = self._index(after.owner)
                        pipe.multi()  # type: ignore[no-untyped-call,unused-ignore]  # redis-py 8 types it
                        pipe.set(key, _encoded(after), px=lifetime)
                        if lifetime is not None:
                            pipe.pexpire(index, lifetime, gt=True)
                        if announce:
                            pipe.publish(self.channel, task_id)
                        await pipe.execute()
                        return after
                    except WatchError:
                        continue  # written meanwhile by another worker: read it again

        found: TaskRecord | None = await self._run(transact)
        return found

    # -- the TaskStore protocol -----------------------------------------------------------

    async def create(self, record: TaskRecord) -> None:
        """Stores a new task (see ``TaskStore.create``)."""
        lifetime = self._lifetime(record)
        keys = [self._key(record.task_id), self._index(record.owner)]
        args = [
            _encoded(record),
            "" if lifetime is None else str(lifetime),
            repr(record.created_at),
            record.task_id,
        ]

        async def create(client: redis.asyncio.Redis) -> Any:
            if self._create is None:
                self._create = client.register_script(_CREATE)
            return await self._create(keys=keys, args=args)

        if not await self._run(create):
            raise ValueError(f"a task with id {record.task_id!r} exists")

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task, or ``None`` (see ``TaskStore.get``).

        A task whose process held it (``holding``) and stopped renewing its lease, killed
        mid-call, is failed here: whichever worker reads it next records the loss.
        """
        if len(task_id) > MAX_ID:
            return None
        keys = [self._key(task_id), *self._leases(task_id)]
        raw, lease, held = await self._run(lambda client: client.mget(keys))
        record = self._live(raw)
        if record is None or record.terminal or held is None or lease is not None:
            return record
        error = {"code": -32603, "message": ABANDONED, "data": {"code": "INTERNAL_ERROR"}}
        failed = await self.update(task_id, status="failed", error=error)
        return failed if failed is not None else await self.get(task_id)

    async def update(self, task_id: str, **change: Unpack[TaskChange]) -> TaskRecord | None:
        """Changes a live task (see ``TaskStore.update``)."""
        return await self._transition(task_id, lambda scratch: scratch.update(task_id, **change))

    async def answer(self, task_id: str, responses: Mapping[str, Any]) -> TaskRecord | None:
        """Records answers to pending questions (see ``TaskStore.answer``)."""
        return await self._transition(task_id, lambda scratch: scratch.answer(task_id, responses))

    async def request_cancel(self, task_id: str) -> TaskRecord | None:
        """Cancels a live task and tells the worker running it (see
        ``TaskStore.request_cancel`` and ``watch_cancel``)."""
        return await self._transition(
            task_id, lambda scratch: scratch.request_cancel(task_id), announce=True
        )

    async def list(self, owner: str | None) -> Sequence[TaskRecord]:
        """The live tasks of ``owner``, newest first (see ``TaskStore.list``)."""
        found: list[TaskRecord] = []
        cursor: str | None = None
        while True:
            page, cursor = await self.list_page(owner, cursor)
            found.extend(page)
            if cursor is None:
                return found

    async def list_page(
        self, owner: str | None, cursor: str | None = None, *, limit: int = _PAGE
    ) -> tuple[builtins.list[TaskRecord], str | None]:
        """One page of ``owner``'s live tasks, newest first, and the cursor of the next.

        The cursor names the last task handed out (opaque to callers; the tasks/list
        layer seals it to its caller). Tasks made after the first page was read come
        first in a new listing, never in the middle of this one.

        Raises:
            ValueError: for a cursor this store did not hand out.
        """
        index = self._index(owner)
        start = 0
        if cursor is not None:
            start = await self._resume(index, cursor)
        ids: builtins.list[bytes] = await self._run(
            lambda client: client.zrevrange(index, start, start + limit - 1)
        )
        if not ids:
            return [], None
        keys = [self._key(task_id.decode()) for task_id in ids]
        raws: builtins.list[bytes | None] = await self._run(lambda client: client.mget(keys))
        page: builtins.list[TaskRecord] = []
        gone: builtins.list[bytes] = []
        for task_id, raw in zip(ids, raws, strict=True):
            record = self._live(raw)
            if record is None:
                gone.append(task_id)
            else:
                page.append(record)
        if gone:  # tidied as met: an expired task leaves its owner's index too
            await self._run(lambda client: client.zrem(index, *gone))
        last = ids[-1].decode()
        score: float = await self._run(lambda client: client.zscore(index, last))
        more = len(ids) == limit
        return page, _cursor(score, last) if more else None

    async def _resume(self, index: str, cursor: str) -> int:
        """The rank a listing continues from after the task ``cursor`` names."""
        try:
            score_text, task_id = base64.urlsafe_b64decode(cursor.encode()).decode().split(" ", 1)
            score = float(score_text)
            if not math.isfinite(score):
                raise ValueError(score_text)
        except (ValueError, UnicodeDecodeError):
            raise ValueError("unknown task cursor") from None
        # By score, not by the task's rank: the task may have expired since.
        newer: int = await self._run(lambda client: client.zcount(index, f"({score}", "+inf"))
        same: builtins.list[bytes] = await self._run(
            lambda client: client.zrangebyscore(index, score, score)
        )
        return newer + sum(1 for member in same if member.decode() >= task_id)

    async def purge_expired(self) -> int:
        """Forgets the tasks expired by this store's clock now (Redis forgets the others
        by itself); returns how many (see ``TaskStore.purge_expired``)."""

        async def purge(client: redis.asyncio.Redis) -> int:
            count = 0
            async for key in client.scan_iter(match=f"{self.prefix}:task:*", count=500):
                raw = await client.get(key)
                if raw is not None and self._live(raw) is None:
                    record = _decoded(raw)
                    await client.delete(key)
                    await client.zrem(self._index(record.owner), record.task_id)
                    count += 1
            return count

        # Not through _run: a scan of a large keyspace may take longer than CALL_WAIT.
        try:
            return await purge(self._link.client)
        except _FAILURES as exc:
            self._link.failed(exc)
            raise TaskStoreUnavailable("task state is unavailable: Redis failed") from exc

    # -- the process running a task ---------------------------------------------------------

    def _leases(self, task_id: str) -> tuple[str, str]:
        """The keys of a task's lease (renewed while a process runs it) and of the mark
        that one ever held it."""
        return f"{self.prefix}:lease:{task_id}", f"{self.prefix}:held:{task_id}"

    @asynccontextmanager
    async def holding(self, task_id: str) -> AsyncIterator[None]:
        """Holds a lease on ``task_id`` while this process runs its call.

        The lease is renewed every third of ``lease`` seconds; once it lapses (the
        process was killed, or lost Redis that long) the next read of the task fails it
        (``get``). Leaving the block releases it; leaving it by an exception (the
        process is stopping, its calls cancelled) drops the lease at once, so the task
        is failed on its next read.
        """
        lease, held = self._leases(task_id)
        ms = int(self.lease * 1000)

        async def renew(client: redis.asyncio.Redis) -> Any:
            async with client.pipeline(transaction=True) as pipe:
                pipe.set(lease, b"1", px=ms)
                pipe.set(held, b"1", px=max(ms, _HELD_MS))
                return await pipe.execute()

        async def beat() -> None:
            while True:
                await anyio.sleep(self.lease / 3)
                with contextlib.suppress(TaskStoreUnavailable):  # lapses if it persists
                    await self._run(renew)

        await self._run(renew)
        ended = [lease, held]
        try:
            async with anyio.create_task_group() as beats:
                beats.start_soon(beat)
                try:
                    yield
                finally:
                    beats.cancel_scope.cancel()
        except BaseException:
            # The call did not end (its process is stopping): the mark stays, so the next
            # read fails the task at once instead of leaving it working.
            ended = [lease]
            raise
        finally:
            with anyio.CancelScope(shield=True), contextlib.suppress(TaskStoreUnavailable):
                await self._run(lambda client: client.delete(*ended))

    # -- cancels reaching the running worker ------------------------------------------------

    def watch_cancel(self, task_id: str, stop: Callable[[], None]) -> Callable[[], None]:
        """Calls ``stop`` when ``task_id`` is cancelled through any store on this Redis.

        Returns the function that stops watching. A cancel made before the watch began
        is not replayed: read the record after watching (``cancel_requested``).
        """
        return self._cancels.watch(task_id, stop)

    @property
    def listening(self) -> anyio.Event:
        """Set once cancels are received (the store entered, its channel subscribed)."""
        return self._cancels.subscribed

    async def __aenter__(self) -> Self:
        await self._cancels.__aenter__()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._cancels.__aexit__(kind, exc, traceback)
        with anyio.CancelScope(shield=True):
            await self._link.aclose()


class _CancelBus(RedisSubscriptionBus):
    """The subscription bus's receiving loop (reconnects, backoff), carrying task ids."""

    def __init__(self, url: str, *, channel: str) -> None:
        super().__init__(url, channel=channel)
        self._link = _Link(url, "cancels made through other workers are not heard")
        self._watchers: dict[str, dict[object, Callable[[], None]]] = {}

    def watch(self, task_id: str, stop: Callable[[], None]) -> Callable[[], None]:
        token = object()
        self._watchers.setdefault(task_id, {})[token] = stop

        def unwatch() -> None:
            watchers = self._watchers.get(task_id, {})
            watchers.pop(token, None)
            if not watchers:
                self._watchers.pop(task_id, None)

        return unwatch

    def _deliver(self, data: bytes) -> None:
        task_id = data.decode("utf-8", "replace")
        self.received += 1
        for stop in list(self._watchers.get(task_id, {}).values()):
            stop()


def _cursor(score: float, task_id: str) -> str:
    return base64.urlsafe_b64encode(f"{score!r} {task_id}".encode()).decode()


def _plain(value: object) -> object:
    """``json.dumps``'s fallback: the record's read-only mappings as dicts."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _encoded(record: TaskRecord) -> str:
    return json.dumps({name: getattr(record, name) for name in _FIELDS}, default=_plain)


def _decoded(raw: bytes | str) -> TaskRecord:
    """The record stored as ``raw``; a value this store did not write raises."""
    fields = json.loads(raw)
    if not isinstance(fields, dict) or fields.get("status") not in _STATUSES:
        raise TaskStoreUnavailable("a task record in Redis is not one this store wrote")
    return TaskRecord(**{name: fields[name] for name in _FIELDS if name in fields})
