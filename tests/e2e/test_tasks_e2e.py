"""MCP tasks (SEP-2663) with the official client over stdio and streamable HTTP.

The client declares the tasks extension; a task action's call answers a task, which the
client polls with ``tasks/get`` (raw requests through the session: the client has no
tasks API), watches its progress, cancels it, or reads its inlined result.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from mcp import Client, StdioServerParameters, types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError
from pydantic import ConfigDict, Field

from tests.e2e import servers

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

EXTENSION = "io.modelcontextprotocol/tasks"
TARGET = f"{Path(__file__).parent / 'tasks_app.py'}:app"

Opener = Callable[[], AbstractAsyncContextManager[Client]]


class CreatedTask(types.Result):
    """The CreateTaskResult a task action's ``tools/call`` answers."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str


class Task(types.Result):
    """A task as the server sends it (CreateTaskResult, or tasks/get's DetailedTask)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    task_id: str = Field(alias="taskId")
    status: str
    status_message: str | None = Field(default=None, alias="statusMessage")
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskIdParams(types.RequestParams):
    """``{taskId}``."""

    task_id: str = Field(alias="taskId")


class TasksGet(types.Request[TaskIdParams, Literal["tasks/get"]]):
    """``tasks/get``."""

    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class TasksCancel(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    """``tasks/cancel``."""

    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


async def _unresolved(task: CreatedTask, context: ClaimContext) -> types.CallToolResult:
    raise AssertionError("these tests read tasks through the session, never resolve them")


class Tasks(ClientExtension):
    """Declares the tasks extension and lets a ``tools/call`` answer a task."""

    identifier = EXTENSION

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=_unresolved)]


@pytest.fixture(scope="module")
async def http_url() -> AsyncIterator[str]:
    """The tasks app over streamable HTTP (stateful)."""
    async with servers.http_server(target=TARGET) as url:
        yield url


@pytest.fixture(scope="module")
async def stateless_url() -> AsyncIterator[str]:
    """The tasks app over stateless streamable HTTP (one store for every request)."""
    async with servers.http_server("--stateless", target=TARGET) as url:
        yield url


@pytest.fixture(params=["stdio", "http", "http-stateless"])
def opener(request: pytest.FixtureRequest) -> Opener:
    """Opens the official client, declaring the tasks extension, over each transport."""
    options: dict[str, Any] = {"mode": "2026-07-28", "extensions": [Tasks()]}
    if request.param == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "mcpfusion.cli", "run", TARGET], cwd=servers.REPO
        )
        return lambda: Client(params, **options)
    fixture = "http_url" if request.param == "http" else "stateless_url"
    url = request.getfixturevalue(fixture)
    return lambda: Client(url, **options)


async def _call(client: Client, action: str) -> CreatedTask:
    await client.list_tools()  # the 2026-07-28 client mirrors listed schemas into headers
    created = await client.session.call_tool("jobs", {"action": action}, allow_claimed=True)
    assert isinstance(created, CreatedTask), created
    return created


async def _get(client: Client, task_id: str) -> Task:
    request = TasksGet(params=TaskIdParams(taskId=task_id))
    return await client.session.send_request(request, Task)


async def test_a_long_task_is_polled_its_progress_seen_and_cancelled(opener: Opener) -> None:
    """A ten-second task is created, polled until its progress shows, then cancelled at once."""
    with anyio.fail_after(60):
        async with opener() as client:
            created = await _call(client, "long")
            assert created.status == "working"
            task = await _get(client, created.task_id)
            while task.status_message is None:  # the first progress report reaches the task
                await anyio.sleep(0.05)
                task = await _get(client, created.task_id)
            assert task.status == "working"
            assert task.status_message.startswith("step ")
            request = TasksCancel(params=TaskIdParams(taskId=created.task_id))
            ack = await client.session.send_request(request, types.Result)
            ended = await _get(client, created.task_id)
    # An empty ack (the client keeps resultType to itself): no task envelope.
    assert not {"taskId", "status", "result"} & set(ack.model_dump(by_alias=True))
    assert ended.status == "cancelled"
    assert ended.result is None


async def test_a_task_completes_and_its_result_is_fetched(opener: Opener) -> None:
    """A short task runs to completion; tasks/get then carries the tool's result."""
    with anyio.fail_after(60):
        async with opener() as client:
            created = await _call(client, "crunch")
            task = await _get(client, created.task_id)
            while task.status not in ("completed", "failed", "cancelled"):
                await anyio.sleep(0.05)
                task = await _get(client, created.task_id)
    assert task.status == "completed"
    assert task.result is not None
    assert "crunched 3 rounds" in task.result["content"][0]["text"]
    assert task.status_message == "crunching finished"


async def test_an_unknown_task_is_invalid_params(opener: Opener) -> None:
    """tasks/get of an id the server never made is refused with -32602."""
    with anyio.fail_after(60):
        async with opener() as client:
            with pytest.raises(MCPError, match="Unknown task") as refused:
                await _get(client, "no-such-task")
    assert refused.value.error.code == -32602


async def test_a_legacy_session_gets_no_tasks() -> None:
    """On 2025-11-25 (over stdio) there are no tasks: an "optional" action answers in its
    request, an "always" one is refused with -32021."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcpfusion.cli", "run", TARGET], cwd=servers.REPO
    )
    with anyio.fail_after(60):
        async with Client(params, mode="legacy", extensions=[Tasks()]) as client:
            inline = await client.call_tool("jobs", {"action": "crunch", "rounds": 1})
            with pytest.raises(MCPError, match="tasks") as refused:
                await client.call_tool("jobs", {"action": "long"})
    assert isinstance(inline.content[0], types.TextContent)
    assert "crunched 1 rounds" in inline.content[0].text
    assert refused.value.error.code == -32021


async def test_a_task_outlives_its_session_and_is_read_from_another(http_url: str) -> None:
    """Over stateful HTTP a task made in one session is polled to its end from another
    session of the same caller, after the first has closed."""
    options: dict[str, Any] = {"mode": "2026-07-28", "extensions": [Tasks()]}
    with anyio.fail_after(60):
        async with Client(http_url, **options) as first:
            created = await _call(first, "crunch")
        async with Client(http_url, **options) as second:
            task = await _get(second, created.task_id)
            while task.status not in ("completed", "failed", "cancelled"):
                await anyio.sleep(0.05)
                task = await _get(second, created.task_id)
    assert task.status == "completed"
    assert task.result is not None
    assert "crunched 3 rounds" in task.result["content"][0]["text"]
