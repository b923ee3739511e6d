"""A task's wire shapes: flat CreateTaskResult, DetailedTask by status, timestamps."""

from __future__ import annotations

from dataclasses import replace

from mcpfusion._tasks.store import TaskRecord
from mcpfusion._tasks.wire import created, detailed, timestamp

RECORD = TaskRecord(
    task_id="abc",
    owner=None,
    params={"name": "jobs"},
    status="working",
    created_at=1_785_240_000.0,
    updated_at=1_785_240_001.5,
    ttl_ms=60_000,
    poll_interval_ms=500,
)


def test_timestamps_are_iso_utc_to_the_millisecond() -> None:
    """Epoch seconds become ISO 8601 UTC with a Z and milliseconds."""
    assert timestamp(1_785_240_001.5) == "2026-07-28T12:00:01.500Z"


def test_create_task_result_is_flat_and_bare() -> None:
    """CreateTaskResult is Result & Task: resultType task, no result, error or questions."""
    assert created(RECORD) == {
        "resultType": "task",
        "taskId": "abc",
        "status": "working",
        "createdAt": "2026-07-28T12:00:00.000Z",
        "lastUpdatedAt": "2026-07-28T12:00:01.500Z",
        "ttlMs": 60_000,
        "pollIntervalMs": 500,
    }


def test_detailed_task_carries_what_its_status_has() -> None:
    """tasks/get inlines the result when completed, the error when failed, questions while
    input is required, and never a requestState."""
    done = replace(RECORD, status="completed", result={"content": [], "isError": False})
    failed = replace(RECORD, status="failed", error={"code": -32603, "message": "Internal"})
    asking = replace(RECORD, status="input_required", input_requests={"q0": {"method": "m"}})
    assert detailed(done)["result"] == {"content": [], "isError": False}
    assert detailed(failed)["error"] == {"code": -32603, "message": "Internal"}
    assert "result" not in detailed(failed)
    assert detailed(asking)["inputRequests"] == {"q0": {"method": "m"}}
    for shape in (detailed(RECORD), detailed(done), detailed(failed), detailed(asking)):
        assert shape["resultType"] == "complete"
        assert "requestState" not in shape
    assert not {"result", "error", "inputRequests"} & set(detailed(RECORD))


def test_a_status_message_is_carried_when_set() -> None:
    """The last progress or log line rides along as statusMessage."""
    assert detailed(replace(RECORD, status_message="half way"))["statusMessage"] == "half way"
