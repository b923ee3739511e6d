"""Queue workers (``mcpfusion worker``, arq) on a real redis-server running tasks' calls:
results stored for any web worker, cancels reaching the handler, a killed worker's task."""

from __future__ import annotations

import os
import re
import signal
import time
from contextlib import suppress
from pathlib import Path

import anyio
import pytest
from saq import Queue
from saq.job import Status

from mcpfusion import Identity
from mcpfusion._serve.task_claim import ClaimingQueue
from mcpfusion._serve.task_queue import DROPPED, QueueTaskRunner
from mcpfusion._tasks.store import TaskRecord, TaskStatus, new_task_id
from mcpfusion.redis import RedisTaskStore
from tests.scale.services import Redis, queue_workers, stop_process

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]


def task(name: str, **arguments: object) -> TaskRecord:
    """A new working task calling ``jobs`` with ``arguments``, kept for ten minutes."""
    now = time.time()
    return TaskRecord(
        task_id=new_task_id(),
        owner="alice",
        params={"name": name, "arguments": arguments},
        status="working",
        created_at=now,
        updated_at=now,
        ttl_ms=600_000,
    )


async def until(store: RedisTaskStore, task_id: str, *statuses: TaskStatus) -> TaskRecord:
    """The task once it reaches one of ``statuses`` (the caller bounds the wait)."""
    while True:
        found = await store.get(task_id)
        assert found is not None
        if found.status in statuses:
            return found
        await anyio.sleep(0.05)


async def running_on(store: RedisTaskStore, task_id: str) -> int:
    """The pid of the worker running ``task_id``, once its handler has reported it."""
    while True:
        found = await store.get(task_id)
        assert found is not None and found.status == "working"
        if found.status_message and found.status_message.startswith("pid="):
            return int(found.status_message.removeprefix("pid="))
        await anyio.sleep(0.05)


def text_of(record: TaskRecord) -> str:
    """The text of a completed task's first content block."""
    assert record.result is not None
    return str(record.result["content"][0]["text"])


async def test_tasks_run_on_the_queue_workers_as_their_caller(redis: Redis, tmp_path: Path) -> None:
    """Tasks submitted by one process run on two worker processes, as the identity that made
    them, and their results are read back through a separate store."""
    queue = f"q-{time.time_ns()}"
    made = [task("jobs", action="whoami") for _ in range(6)]
    with queue_workers(redis, queue, tmp_path, 2) as started:
        with anyio.fail_after(60):
            async with (
                RedisTaskStore(redis.url) as web,
                QueueTaskRunner(web, queue=queue) as executor,
            ):
                for record in made:
                    await web.create(record)
                    await executor.submit(record, Identity("alice", scopes={"jobs"}))
            async with RedisTaskStore(redis.url) as other:
                done = [await until(other, record.task_id, "completed") for record in made]
    pids = {int(re.search(r"pid=(\d+)", text_of(record)).group(1)) for record in done}  # type: ignore[union-attr]
    assert pids <= {process.pid for process in started} and os.getpid() not in pids
    assert all("subject=alice" in text_of(record) for record in done)


async def test_a_cancel_from_another_process_stops_the_running_handler(
    redis: Redis, tmp_path: Path
) -> None:
    """A task cancelled through a store in another process than its worker ends
    ``cancelled`` and its handler is stopped mid-wait, not left to run."""
    queue = f"q-{time.time_ns()}"
    marker = tmp_path / "marker"
    record = task("jobs", action="hold", marker=str(marker))
    with queue_workers(redis, queue, tmp_path, 1, "--retries", "1"):
        with anyio.fail_after(60):
            async with (
                RedisTaskStore(redis.url) as web,
                QueueTaskRunner(web, queue=queue) as executor,
            ):
                await web.create(record)
                await executor.submit(record, None)
                await running_on(web, record.task_id)
                cancelled = await web.request_cancel(record.task_id)
                assert cancelled is not None and cancelled.status == "cancelled"
                while marker.read_text() != "cancelled":
                    await anyio.sleep(0.05)
                assert (await until(web, record.task_id, "cancelled")).result is None


@pytest.mark.parametrize(
    ("retries", "ending"), [("0", "failed"), ("1", "completed")], ids=["failed", "retried"]
)
async def test_a_task_whose_worker_is_killed_ends_as_documented(
    redis: Redis, tmp_path: Path, retries: str, ending: TaskStatus
) -> None:
    """SIGKILL on the worker running a task: after its lease another worker fails it (no
    retries) or runs it again to completion (``--retries 1``); it is never left working."""
    queue = f"q-{time.time_ns()}"
    marker = tmp_path / "marker"
    record = task("jobs", action="hold", marker=str(marker))
    with queue_workers(redis, queue, tmp_path, 2, "--retries", retries) as started:
        with anyio.fail_after(90):
            async with (
                RedisTaskStore(redis.url) as web,
                QueueTaskRunner(web, queue=queue) as executor,
            ):
                await web.create(record)
                await executor.submit(record, None)
                pid = await running_on(web, record.task_id)
                victim = next(process for process in started if process.pid == pid)
                os.kill(victim.pid, signal.SIGKILL)
                victim.wait(timeout=10)
                ended = await until(web, record.task_id, "failed", "completed")
    survivor = next(process for process in started if process.pid != pid)
    assert ended.status == ending
    if ending == "failed":
        assert ended.error is not None
        assert "stopped before it ended" in ended.error["message"]
    else:
        assert text_of(ended) == f"pid={survivor.pid} ran again"
    with suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


async def test_a_worker_stopped_with_sigterm_hands_its_task_back(
    redis: Redis, tmp_path: Path
) -> None:
    """SIGTERM on the worker running a task: the job goes back to the queue at once, that try
    is not counted, and the other worker runs it to completion even with no retries."""
    queue = f"q-{time.time_ns()}"
    marker = tmp_path / "marker"
    record = task("jobs", action="hold", marker=str(marker))
    with queue_workers(redis, queue, tmp_path, 2) as started:
        with anyio.fail_after(60):
            async with (
                RedisTaskStore(redis.url) as web,
                QueueTaskRunner(web, queue=queue) as executor,
            ):
                await web.create(record)
                await executor.submit(record, None)
                pid = await running_on(web, record.task_id)
                stopped = next(process for process in started if process.pid == pid)
                stop_process(stopped)
                ended = await until(web, record.task_id, "failed", "completed")
    survivor = next(process for process in started if process.pid != pid)
    assert ended.status == "completed"
    assert text_of(ended) == f"pid={survivor.pid} ran again"


async def test_a_job_taken_by_a_worker_that_dies_at_once_is_taken_back(
    redis: Redis, tmp_path: Path
) -> None:
    """A job is taken in one step: stored active with its worker's heartbeat, left alone by
    a sweep right then, and run by a live worker if the taker dies before it ever beats."""
    queue = f"q-{time.time_ns()}"
    record = task("jobs", action="whoami")
    # The budget of the killed-worker tests: a 2 s heartbeat, SAQ's 5 s wait for an abort,
    # a retry's backoff and a worker's start, many times over for a busy machine.
    with anyio.fail_after(90):
        async with (
            RedisTaskStore(redis.url) as web,
            QueueTaskRunner(web, queue=queue) as executor,
        ):
            await web.create(record)
            await executor.submit(record, None)
            # A worker that takes the job, meets a sweep (as every worker sweeps when it
            # starts), then dies before saq.Worker.process ran anything.
            dying = ClaimingQueue.from_url(redis.url, name=queue, heartbeat=2)
            await dying.connect()
            try:
                assert await dying.dequeue(timeout=10) is not None
                stored = await dying.job(record.task_id)
                swept = await dying.sweep(lock=1)
            finally:
                await dying.disconnect()
            assert stored is not None and (stored.status, stored.heartbeat) == (Status.ACTIVE, 2)
            assert swept == []
            with queue_workers(redis, queue, tmp_path, 1) as started:
                ended = await until(web, record.task_id, "failed", "completed")
    assert ended.status == "completed"
    assert text_of(ended).startswith(f"pid={started[0].pid} ")


async def test_a_task_whose_job_the_queue_aborts_ends_failed(redis: Redis, tmp_path: Path) -> None:
    """A running task whose job SAQ aborts (as a sweep does to a worker it took for dead) is
    stopped and ends ``failed`` with the queue's word: SAQ drops the job, nothing runs it."""
    queue = f"q-{time.time_ns()}"
    marker = tmp_path / "marker"
    record = task("jobs", action="hold", marker=str(marker))
    with queue_workers(redis, queue, tmp_path, 1):
        with anyio.fail_after(90):
            async with (
                RedisTaskStore(redis.url) as web,
                QueueTaskRunner(web, queue=queue) as executor,
            ):
                await web.create(record)
                await executor.submit(record, None)
                await running_on(web, record.task_id)
                saq = Queue.from_url(redis.url, name=queue)
                await saq.connect()
                try:
                    job = await saq.job(record.task_id)
                    assert job is not None
                    await saq.abort(job, "aborted by the test")
                finally:
                    await saq.disconnect()
                ended = await until(web, record.task_id, "failed", "completed")
    assert ended.status == "failed" and ended.error is not None
    assert ended.error["message"] == f"{DROPPED} (aborted)"
    assert ended.error["data"] == {"code": "INTERNAL_ERROR"}
    assert marker.read_text() == "cancelled"
