"""A task's wire shapes (SEP-2663): ``CreateTaskResult`` and the ``tasks/get`` answer."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from mcpfusion._tasks.store import TaskRecord

__all__ = ["EXTENSION", "created", "detailed", "timestamp"]

EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The tasks extension's identifier, under ``capabilities.extensions``."""


def timestamp(seconds: float) -> str:
    """An ISO 8601 UTC timestamp, to the millisecond: ``2026-07-28T12:00:00.000Z``."""
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _task(record: TaskRecord) -> dict[str, Any]:
    """The ``Task`` fields every shape carries."""
    task: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": timestamp(record.created_at),
        "lastUpdatedAt": timestamp(record.updated_at),
        "ttlMs": record.ttl_ms,
    }
    if record.poll_interval_ms is not None:
        task["pollIntervalMs"] = record.poll_interval_ms
    if record.status_message is not None:
        task["statusMessage"] = record.status_message
    return task


def created(record: TaskRecord) -> dict[str, Any]:
    """The ``CreateTaskResult`` answering the ``tools/call`` that made the task: flat
    ``Result & Task``, ``resultType: "task"``, no result, error or questions."""
    return {"resultType": "task", **_task(record)}


def detailed(record: TaskRecord) -> dict[str, Any]:
    """The ``tasks/get`` answer (``DetailedTask``): the task, with its result once
    completed, its error once failed, and its pending questions while input is required."""
    task = {"resultType": "complete", **_task(record)}
    if record.status == "completed" and record.result is not None:
        task["result"] = dict(record.result)
    elif record.status == "failed" and record.error is not None:
        task["error"] = dict(record.error)
    elif record.status == "input_required" and record.input_requests:
        task["inputRequests"] = dict(record.input_requests)
    return task
