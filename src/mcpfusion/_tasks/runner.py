"""How a task's call runs: the ``TaskRunner`` seam and the in-process runner."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Protocol

import anyio
from anyio.abc import TaskGroup

from mcpfusion._identity import Identity
from mcpfusion._tasks.store import TaskRecord

__all__ = ["InProcessTaskRunner", "TaskCall", "TaskRunner"]

logger = logging.getLogger("mcpfusion")

TaskCall = Callable[[], Awaitable[None]]
"""A task's work: runs the call and writes its outcome to the store (the caller's glue)."""


class TaskRunner(Protocol):
    """Runs tasks' calls somewhere (this process, or a queue's workers) and steers them.

    The server creates the task in the store first, then starts it here, so a client
    polling right after ``tools/call`` finds it. A runner of another kind (a queue) keeps
    the same contract: ``cancel`` and ``answered`` wake a call wherever it runs (a worker
    elsewhere reads ``cancel_requested`` and ``input_responses`` from the store).
    """

    async def start(
        self, record: TaskRecord, call: TaskCall, identity: Identity | None = None
    ) -> None:
        """Starts ``call`` for the task ``record``; returns once it is under way.

        ``identity`` is the caller's, for a runner that runs the call elsewhere (a queue
        worker calls the app as that caller); ``call`` already holds it.
        """
        ...

    async def cancel(self, task_id: str) -> None:
        """Stops the task's call if it runs here (its record already says ``cancelled``)."""
        ...

    async def answered(self, task_id: str) -> None:
        """Wakes the task's call: the client answered a question (or it was cancelled)."""
        ...

    async def wait(self, task_id: str, timeout: float) -> None:
        """Waits until ``answered`` is called for the task, or ``timeout`` seconds pass."""
        ...


class InProcessTaskRunner:
    """A ``TaskRunner`` running each task's call in this process's event loop.

    Calls run in a task group that ``running()`` holds open for the life of the server
    (the HTTP app's lifespan, the stdio session), not the request that made them: a task
    outlives its ``tools/call``. Cancelling one cancels its scope, so the handler stops
    at its next await.
    """

    def __init__(self) -> None:
        self._group: TaskGroup | None = None
        self._scopes: dict[str, anyio.CancelScope] = {}
        self._wakers: dict[str, anyio.Event] = {}

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Holds the task group open; the calls still running at its end are cancelled."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                self._group = None
                group.cancel_scope.cancel()

    @property
    def ready(self) -> bool:
        """Whether ``running()`` is open, so ``start`` can run a call."""
        return self._group is not None

    async def start(
        self, record: TaskRecord, call: TaskCall, identity: Identity | None = None
    ) -> None:
        """Runs ``call`` in the background, under a scope ``cancel`` cancels.

        Raises:
            RuntimeError: when ``running()`` is not open.
        """
        group = self._group
        if group is None:
            raise RuntimeError("the task runner is not running (serve the app to run tasks)")
        scope = anyio.CancelScope()
        self._scopes[record.task_id] = scope

        async def run() -> None:
            try:
                with scope:
                    await call()
            finally:
                self._scopes.pop(record.task_id, None)
                self._wakers.pop(record.task_id, None)

        group.start_soon(run, name=f"mcpfusion task {record.task_id}")

    async def cancel(self, task_id: str) -> None:
        """Cancels the task's call, if it still runs."""
        scope = self._scopes.get(task_id)
        if scope is not None:
            scope.cancel()

    async def answered(self, task_id: str) -> None:
        """Wakes the call waiting in ``wait``, if any."""
        waker = self._wakers.pop(task_id, None)
        if waker is not None:
            waker.set()

    async def wait(self, task_id: str, timeout: float) -> None:
        """Waits for ``answered``, at most ``timeout`` seconds."""
        waker = self._wakers.setdefault(task_id, anyio.Event())
        with anyio.move_on_after(timeout):
            await waker.wait()
