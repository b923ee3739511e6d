"""An in-process runner whose calls stop on a cancel made through any worker (a shared store)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol

import anyio

from mcpfusion._identity import Identity
from mcpfusion._tasks.runner import InProcessTaskRunner, TaskCall
from mcpfusion._tasks.store import TaskRecord


class CancelFeed(Protocol):
    """A store shared by processes (``mcpfusion.redis.RedisTaskStore``): it tells this one
    of cancels stored by any, and sees when the process running a task dies."""

    def watch_cancel(self, task_id: str, stop: Callable[[], None]) -> Callable[[], None]:
        """Calls ``stop`` when ``task_id`` is cancelled anywhere; returns the unwatch."""
        ...

    def holding(self, task_id: str) -> AbstractAsyncContextManager[None]:
        """Marks ``task_id`` as run by this process, for as long as the block lasts."""
        ...


class WatchedTaskRunner(InProcessTaskRunner):
    """Runs calls in this process, like ``InProcessTaskRunner``, and stops one when its
    task is cancelled through another worker or replica sharing the store; while a call
    runs, the store knows this process holds it, so a task whose process was killed ends
    ``failed`` rather than ``working`` for ever.

    ``tasks/cancel`` reaching this process cancels the call directly; reaching another,
    it is stored there and the store's feed brings it here.

    Args:
        feed: the shared store's cancel feed.
    """

    def __init__(self, feed: CancelFeed) -> None:
        super().__init__()
        self._feed = feed

    async def start(
        self, record: TaskRecord, call: TaskCall, identity: Identity | None = None
    ) -> None:
        """Runs ``call`` in the background until it ends or its task is cancelled anywhere."""
        feed, task_id = self._feed, record.task_id

        async def watched() -> None:
            async with feed.holding(task_id):
                with anyio.CancelScope() as scope:
                    unwatch = feed.watch_cancel(task_id, scope.cancel)
                    try:
                        await call()
                    finally:
                        unwatch()

        await super().start(record, watched, identity)
