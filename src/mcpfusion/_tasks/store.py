"""Where task state lives: ``TaskRecord``, the ``TaskStore`` protocol and ``MemoryTaskStore``."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal, Protocol, TypedDict, Unpack, get_args

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
"""A task's status, as SEP-2663 spells it on the wire."""

TASK_STATUSES: Final[tuple[TaskStatus, ...]] = get_args(TaskStatus)
TERMINAL_STATUSES: Final[frozenset[TaskStatus]] = frozenset({"completed", "failed", "cancelled"})
"""A task in one of these never changes again (the store refuses it)."""


def new_task_id() -> str:
    """A fresh task id: 128 random bits, URL-safe, so knowing one never reveals another."""
    return secrets.token_urlsafe(16)


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """One task's state, as a store keeps it: plain JSON-shaped values, so any store can.

    Attributes:
        task_id: the id the client polls with.
        owner: whom the task belongs to (the caller's principal: identity and tenant);
            ``None`` for an anonymous caller. Only its owner reads or steers it.
        params: the ``tools/call`` params that started it (``name``, ``arguments``), what
            a worker needs to run or retry it.
        status: one of ``TASK_STATUSES``.
        created_at: when it was made, in seconds since the epoch.
        updated_at: when it last changed, in seconds since the epoch.
        ttl_ms: how long it is kept after its last change, in milliseconds (``None``:
            until the process ends).
        poll_interval_ms: how often the client is told to poll, in milliseconds.
        status_message: what the task says it is doing (its last progress or log line).
        progress: its last progress report (``progress``, and ``total`` when known).
        result: the tool's result (the wire ``CallToolResult``) once ``completed``.
        error: the JSON-RPC error (``code``, ``message``, ``data``) once ``failed``.
        input_requests: the questions still waiting for the client, by request id.
        input_responses: the answers the client gave, by request id, for the worker.
        cancel_requested: whether the client asked to cancel it (the worker stops).
    """

    task_id: str
    owner: str | None
    params: Mapping[str, Any]
    status: TaskStatus
    created_at: float
    updated_at: float
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    status_message: str | None = None
    progress: Mapping[str, Any] | None = None
    result: Mapping[str, Any] | None = None
    error: Mapping[str, Any] | None = None
    input_requests: Mapping[str, Any] = field(default_factory=dict)
    input_responses: Mapping[str, Any] = field(default_factory=dict)
    cancel_requested: bool = False

    @property
    def terminal(self) -> bool:
        """Whether the task has ended (completed, failed or cancelled)."""
        return self.status in TERMINAL_STATUSES

    @property
    def expires_at(self) -> float | None:
        """When a store may forget it: ``ttl_ms`` after its last change (``None``: never)."""
        return None if self.ttl_ms is None else self.updated_at + self.ttl_ms / 1000


class TaskChange(TypedDict, total=False):
    """What ``TaskStore.update`` may change (its keyword arguments); ``None`` changes nothing.

    Attributes:
        status: the new status.
        status_message: what the task says it is doing.
        progress: its last progress report.
        result: the tool's result.
        error: the JSON-RPC error.
        add_input_requests: questions added to the pending ones (parallel questions add
            one each).
    """

    status: TaskStatus | None
    status_message: str | None
    progress: Mapping[str, Any] | None
    result: Mapping[str, Any] | None
    error: Mapping[str, Any] | None
    add_input_requests: Mapping[str, Any] | None


class TaskStore(Protocol):
    """Where tasks live, shared by every session (and, for a shared store, every process).

    Each method is atomic: a status change is checked and made in one step, so a task that
    has reached a terminal status never changes again (a late result after a cancel is
    dropped). A task past ``expires_at`` is gone: every method treats it as unknown.
    Ownership is the caller's to check (``record.owner``); the store only lists by it.
    """

    async def create(self, record: TaskRecord) -> None:
        """Stores a new task, readable as soon as this returns.

        Raises:
            ValueError: when a task with that id exists.
        """
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task, or ``None`` when it is unknown or expired."""
        ...

    async def update(self, task_id: str, **change: Unpack[TaskChange]) -> TaskRecord | None:
        """Changes a live task and stamps ``updated_at``; the fields left out (or ``None``)
        stay (``TaskChange`` lists them).

        Returns the changed record, or ``None`` (nothing changed) when the task
        is unknown, expired or already terminal.
        """
        ...

    async def answer(self, task_id: str, responses: Mapping[str, Any]) -> TaskRecord | None:
        """Records the client's answers to pending questions.

        Each answered id leaves ``input_requests`` for ``input_responses``; ids not pending
        are ignored. When no question is left, an ``input_required`` task is ``working``
        again. Returns the record, or ``None`` when the task is unknown, expired or
        terminal.
        """
        ...

    async def request_cancel(self, task_id: str) -> TaskRecord | None:
        """Cancels a live task: ``cancelled`` at once, with ``cancel_requested`` set for
        the worker running it. A terminal task is returned unchanged (cancel is
        idempotent); ``None`` when it is unknown or expired."""
        ...

    async def list(self, owner: str | None) -> Sequence[TaskRecord]:
        """The live (unexpired) tasks of ``owner``, newest first."""
        ...

    async def purge_expired(self) -> int:
        """Forgets the expired tasks now; returns how many."""
        ...


class MemoryTaskStore:
    """A ``TaskStore`` in this process's memory: one process, nothing to install.

    Every session and request of the process shares it (stateless HTTP included); it dies
    with the process. Expired tasks are forgotten as they are met and at each ``create``.

    Args:
        clock: seconds since the epoch (tests pass a fake one to expire tasks).
    """

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._tasks: dict[str, TaskRecord] = {}

    def _live(self, task_id: str) -> TaskRecord | None:
        record = self._tasks.get(task_id)
        if record is None:
            return None
        expires_at = record.expires_at
        if expires_at is not None and expires_at <= self._clock():
            del self._tasks[task_id]
            return None
        return record

    def _put(self, record: TaskRecord, **changes: Any) -> TaskRecord:
        record = replace(record, updated_at=self._clock(), **changes)
        self._tasks[record.task_id] = record
        return record

    async def create(self, record: TaskRecord) -> None:
        """Stores a new task (see ``TaskStore.create``)."""
        await self.purge_expired()
        if record.task_id in self._tasks:
            raise ValueError(f"a task with id {record.task_id!r} exists")
        self._tasks[record.task_id] = record

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task, or ``None`` (see ``TaskStore.get``)."""
        return self._live(task_id)

    async def update(self, task_id: str, **change: Unpack[TaskChange]) -> TaskRecord | None:
        """Changes a live task (see ``TaskStore.update``)."""
        unknown = change.keys() - TaskChange.__optional_keys__
        if unknown:  # as a keyword-only signature would: a misspelt change is no change
            raise TypeError(f"update() got unexpected keyword arguments {sorted(unknown)}")
        record = self._live(task_id)
        if record is None or record.terminal:
            return None
        changes: dict[str, Any] = {
            key: dict(value) if isinstance(value, Mapping) else value
            for key, value in change.items()
            if value is not None and key != "add_input_requests"
        }
        added = change.get("add_input_requests")
        if added:
            changes["input_requests"] = {**record.input_requests, **added}
        return self._put(record, **changes)

    async def answer(self, task_id: str, responses: Mapping[str, Any]) -> TaskRecord | None:
        """Records answers to pending questions (see ``TaskStore.answer``)."""
        record = self._live(task_id)
        if record is None or record.terminal:
            return None
        answered = {key: value for key, value in responses.items() if key in record.input_requests}
        if not answered:
            return record
        pending = {k: v for k, v in record.input_requests.items() if k not in answered}
        status = "working" if not pending and record.status == "input_required" else record.status
        return self._put(
            record,
            status=status,
            input_requests=pending,
            input_responses={**record.input_responses, **answered},
        )

    async def request_cancel(self, task_id: str) -> TaskRecord | None:
        """Cancels a live task (see ``TaskStore.request_cancel``)."""
        record = self._live(task_id)
        if record is None or record.terminal:
            return record
        return self._put(record, status="cancelled", cancel_requested=True, input_requests={})

    async def list(self, owner: str | None) -> Sequence[TaskRecord]:
        """The live tasks of ``owner``, newest first (see ``TaskStore.list``)."""
        await self.purge_expired()
        found = [record for record in self._tasks.values() if record.owner == owner]
        return sorted(found, key=lambda record: record.created_at, reverse=True)

    async def purge_expired(self) -> int:
        """Forgets the expired tasks (see ``TaskStore.purge_expired``)."""
        before = len(self._tasks)
        for task_id in list(self._tasks):
            self._live(task_id)
        return before - len(self._tasks)
