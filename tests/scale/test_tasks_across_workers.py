"""MCP tasks across servers sharing Redis, with the official client: a task made through one
server is read and cancelled through another, in the web workers or on queue workers, and a
queue worker killed mid-task leaves it failed."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import anyio
import pytest

from mcpfusion._serve.task_queue import DEFAULT_QUEUE
from tests.e2e.test_tasks_e2e import Task
from tests.scale.services import Redis, cli, queue_workers, replicas
from tests.scale.tasks_client import cancel, client, create, ended, get

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]

TARGET = f"{Path(__file__).with_name('task_app.py')}:app"


async def make(port: int, action: str, **arguments: object) -> str:
    """Makes a task through the server on ``port`` (a session of its own); returns its id."""
    async with client(port) as session:
        await session.list_tools()  # the 2026-07-28 client mirrors schemas into headers
        return await create(session, action, **arguments)


async def read(port: int, task_id: str) -> Task:
    """``tasks/get`` through the server on ``port``."""
    async with client(port) as session:
        return await get(session, task_id)


async def stop(port: int, task_id: str) -> None:
    """``tasks/cancel`` through the server on ``port``."""
    async with client(port) as session:
        await cancel(session, task_id)


async def end(port: int, task_id: str) -> Task:
    """The task once it ended, read through the server on ``port``."""
    async with client(port) as session:
        return await ended(session, task_id)


async def running_on(port: int, task_id: str) -> int:
    """The pid of the process running the task's handler, as it reported it."""
    while not ((task := await read(port, task_id)).status_message or "").startswith("pid="):
        assert task.status == "working", task
        await anyio.sleep(0.1)
    assert task.status_message is not None
    return int(task.status_message.removeprefix("pid="))


def pid_in(task: Task) -> int:
    """The pid a completed ``whoami`` or ``hold`` task's result names."""
    assert task.status == "completed" and task.result is not None, task
    found = re.search(r"pid=(\d+)", task.result["content"][0]["text"])
    assert found is not None, task.result
    return int(found.group(1))


async def until_written(marker: Path, text: str) -> None:
    """Waits until the handler wrote ``text`` into its marker file."""
    while not (marker.exists() and marker.read_text() == text):
        await anyio.sleep(0.05)


async def test_tasks_in_the_web_workers_are_read_and_cancelled_through_another_server(
    redis: Redis, folder: Path
) -> None:
    """Two servers share Redis: a task made on the first runs there, its result is read on
    the second; a task cancelled through the second stops its handler on the first."""
    commands = [cli(TARGET, "--stateless", "--redis-url", redis.url) for _ in range(2)]
    with replicas(commands, folder / "servers") as (first, second):
        with anyio.fail_after(90):
            done = await end(second.port, await make(first.port, "whoami"))
            assert pid_in(done) == first.process.pid != second.process.pid
            marker = folder / "held"
            held = await make(first.port, "hold", marker=str(marker))
            assert await running_on(second.port, held) == first.process.pid
            await stop(second.port, held)
            await until_written(marker, "cancelled")
            assert (await read(first.port, held)).status == "cancelled"


async def test_a_task_whose_web_worker_is_killed_ends_failed(redis: Redis, folder: Path) -> None:
    """SIGKILL on the server running a task in its web worker: read through the other
    server once the dead one's lease has lapsed (15 s), the task has failed."""
    commands = [cli(TARGET, "--stateless", "--redis-url", redis.url) for _ in range(2)]
    with replicas(commands, folder / "servers") as (first, second):
        with anyio.fail_after(90):
            doomed = await make(first.port, "hold", marker=str(folder / "held"))
            assert await running_on(second.port, doomed) == first.process.pid
            first.signal_group(signal.SIGKILL)
            task = await end(second.port, doomed)
    assert task.status == "failed"
    assert task.error is not None and "stopped before it ended" in task.error["message"]


async def test_queued_tasks_run_on_workers_and_a_killed_worker_leaves_its_task_failed(
    redis: Redis, folder: Path
) -> None:
    """With --task-queue two servers hand calls to two queue workers: a result made on a
    worker is read through the other server (a handler-begun task stays on its server), a
    cancel through it stops the worker's handler, and SIGKILL on the worker running a task
    ends that task failed."""
    commands = [
        cli(TARGET, "--stateless", "--redis-url", redis.url, "--task-queue") for _ in range(2)
    ]
    with (
        replicas(commands, folder / "servers") as (first, second),
        queue_workers(redis, DEFAULT_QUEUE, folder / "workers", 2) as started,
    ):
        worker_pids = {process.pid for process in started}
        with anyio.fail_after(120):
            done = await end(second.port, await make(first.port, "whoami"))
            assert pid_in(done) in worker_pids
            # A call that becomes a task in its handler stays with the request's server.
            begun = await end(second.port, await make(first.port, "begun"))
            assert pid_in(begun) == first.process.pid
            cancelled = folder / "cancelled"
            held = await make(first.port, "hold", marker=str(cancelled))
            assert await running_on(second.port, held) in worker_pids
            await stop(second.port, held)
            await until_written(cancelled, "cancelled")
            killed = folder / "killed"
            doomed = await make(first.port, "hold", marker=str(killed))
            victim = await running_on(second.port, doomed)
            os.kill(victim, signal.SIGKILL)
            task = await end(first.port, doomed)
    assert task.status == "failed"
    assert task.error is not None and "stopped before it ended" in task.error["message"]
