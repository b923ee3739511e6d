"""The official client speaking MCP tasks to a server, for the scale tests and benchmarks."""

from __future__ import annotations

import anyio
from mcp import Client, types

from tests.e2e.test_tasks_e2e import CreatedTask, Task, TaskIdParams, Tasks, TasksCancel, TasksGet

ENDED = ("completed", "failed", "cancelled")


def client(port: int) -> Client:
    """The official client on a server's port, declaring the tasks extension."""
    return Client(f"http://127.0.0.1:{port}/mcp", mode="2026-07-28", extensions=[Tasks()])


async def create(session: Client, action: str, **arguments: object) -> str:
    """Makes a ``jobs`` task through ``session`` (its tools listed); returns its id."""
    created = await session.session.call_tool(
        "jobs", {"action": action, **arguments}, allow_claimed=True
    )
    assert isinstance(created, CreatedTask), created
    return created.task_id


async def get(session: Client, task_id: str) -> Task:
    """``tasks/get`` through ``session``."""
    return await session.session.send_request(TasksGet(params=TaskIdParams(taskId=task_id)), Task)


async def cancel(session: Client, task_id: str) -> None:
    """``tasks/cancel`` through ``session``."""
    request = TasksCancel(params=TaskIdParams(taskId=task_id))
    await session.session.send_request(request, types.Result)


async def ended(session: Client, task_id: str, poll: float = 0.1) -> Task:
    """The task once it ended, polled every ``poll`` seconds (the caller bounds it)."""
    while (task := await get(session, task_id)).status not in ENDED:
        await anyio.sleep(poll)
    return task
