"""The queue of ``mcpfusion worker``: SAQ's Redis queue, taking a job in one atomic claim."""

from __future__ import annotations

from typing import Any, Final

from saq.job import Job, Status
from saq.queue.redis import RedisQueue
from saq.utils import now

_CLAIM: Final = """
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
if redis.call('LREM', KEYS[1], 1, KEYS[3]) == 0 then return 0 end
redis.call('SET', KEYS[3], ARGV[2])
redis.call('RPUSH', KEYS[2], KEYS[3])
return 1
"""
"""Moves job KEYS[3] from the queued list KEYS[1] to the active list KEYS[2], stored as
ARGV[2], if it is still queued and stored as ARGV[1] (else another worker, an abort or a
retry changed it first)."""


class ClaimingQueue(RedisQueue):
    """SAQ's Redis queue, whose worker takes a job and stores it ``active``, with its own
    heartbeat, in one step.

    SAQ's own ``dequeue`` moves a job to the active list, then ``Worker.process`` stores it
    ``active``. A sweep between the two (every worker sweeps as it starts, when a job is
    already waiting) finds a job in the active list that is not ``active``, takes it for
    orphaned and aborts it, removing it from the active list; the worker's write then
    stores it ``active`` again, outside that list, where no later sweep looks: if that
    worker dies, its task stays ``working`` for good. Without a heartbeat (and no timeout:
    a task's limit is the worker's) an active job is never ``stuck`` for a sweep either.

    Here the job is first only rotated in the queued list (which blocks until one waits),
    then claimed by a script (``_CLAIM``) that moves it and stores it ``active``, touched
    now, with ``heartbeat``: a sweep sees it waiting or claimed, never in between.

    Args:
        redis: the Redis client (see ``from_url``).
        heartbeat: seconds without a beat after which the job's worker counts as dead.
        **options: ``RedisQueue``'s (``name``...).
    """

    def __init__(self, redis: Any, *, heartbeat: int, **options: Any) -> None:
        super().__init__(redis, **options)
        self.heartbeat = heartbeat
        self._claim: Any = None

    async def dequeue(self, timeout: float = 0.0, poll_interval: float = 0.0) -> Job | None:
        """The next job, claimed; ``None`` after ``timeout`` seconds (0: wait for one).

        A claim lost to another worker waits again, the whole ``timeout``.
        """
        if self._claim is None:
            self._claim = self.redis.register_script(_CLAIM)
        while True:
            job_id = await self._next(timeout)
            if job_id is None:
                return None
            stored = await self.redis.get(job_id)
            job = self.deserialize(stored)
            if job is None:  # its record expired: SAQ's sweep would drop the id as well
                await self.redis.lrem(self._queued, 1, job_id.decode())
                continue
            job.status = Status.ACTIVE
            job.heartbeat = self.heartbeat
            job.touched = now()
            claimed = await self._claim(
                keys=[self._queued, self._active, job_id],
                args=[stored, self.serialize(job)],
                client=self.redis,
            )
            if claimed:
                return job

    async def _next(self, timeout: float) -> bytes | None:
        """The id of the job first in the queued list, left in it (at its end)."""
        if await self.version() < (6, 2, 0):
            found = await self.redis.brpoplpush(self._queued, self._queued, timeout)
        else:
            found = await self.redis.blmove(
                self._queued,
                self._queued,
                timeout,  # type: ignore[arg-type]  # seconds, a float as SAQ passes it
                "LEFT",
                "RIGHT",
            )
        return found if isinstance(found, bytes) else None
