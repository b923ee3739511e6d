"""MCP tasks (SEP-2663) on the SDK's server: creating tasks, ``tasks/*`` and the task's client."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final, cast

import anyio
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import CLIENT_CAPABILITIES_META_KEY, MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ConfigDict, Field

from mcpfusion._identity import Identity
from mcpfusion._present.response import ToolResponse
from mcpfusion._serve.protocol import ServableApp
from mcpfusion._serve.results import call_result, respond
from mcpfusion._serve.rounds import input_required, missing_capability
from mcpfusion._serve.sdk_client import SdkClient
from mcpfusion._serve.task_channels import STATUS_MESSAGE_LIMIT, BeginningChannel, TaskChannel
from mcpfusion._tasks.runner import InProcessTaskRunner, TaskCall, TaskRunner
from mcpfusion._tasks.store import MemoryTaskStore, TaskRecord, TaskStore, new_task_id
from mcpfusion._tasks.wire import EXTENSION, created, detailed
from mcpfusion._tools.client import ClientLacks, InputNeeded
from mcpfusion._tools.context import Progress
from mcpfusion._tools.definition import TaskBegins

__all__ = ["TaskService"]

logger = logging.getLogger("mcpfusion")

INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603


class TaskParams(types.RequestParams):
    """The params of ``tasks/get`` and ``tasks/cancel``."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    task_id: str = Field(alias="taskId")


class UpdateParams(TaskParams):
    """The params of ``tasks/update``: the client's answers to the task's questions."""

    input_responses: dict[str, Any] = Field(alias="inputResponses")


def negotiated(ctx: ServerRequestContext[Any], meta: Mapping[str, Any] | None = None) -> bool:
    """Whether the request's client declared the tasks extension (2026-07-28 only).

    The session's capabilities carry it, or the request's own ``_meta`` opts in for this
    one call (SEP-2575's per-request capabilities).
    """
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    declared = ctx.session.client_capabilities
    if declared is not None and EXTENSION in (declared.extensions or {}):
        return True
    raw = (meta or {}).get(CLIENT_CAPABILITIES_META_KEY)
    extensions = raw.get("extensions") if isinstance(raw, Mapping) else None
    return isinstance(extensions, Mapping) and EXTENSION in extensions


def _refused() -> MCPError:
    """The ``-32021`` naming the tasks extension the client did not declare."""
    return MCPError(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=f"This request requires the client extension '{EXTENSION}'",
        data={"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


class TaskService:
    """Tasks of one server: made by ``tools/call``, read and steered by ``tasks/*``.

    Args:
        app: the app whose calls run as tasks.
        store: where tasks live (a ``MemoryTaskStore`` of this server by default).
        runner: where their calls run (in this process by default).
        owner_of: whom a request's tasks belong to (the caller's principal).
        ttl_ms: how long a task is kept after its last change.
        poll_interval_ms: how often clients are told to poll.
    """

    def __init__(
        self,
        app: ServableApp,
        owner_of: Callable[[ServerRequestContext[Any]], str | None],
        *,
        store: TaskStore | None = None,
        runner: TaskRunner | None = None,
        ttl_ms: int = 3_600_000,
        poll_interval_ms: int = 500,
    ) -> None:
        self.app = app
        self.owner_of = owner_of
        self.store: TaskStore = store if store is not None else MemoryTaskStore()
        self.runner: TaskRunner = runner if runner is not None else InProcessTaskRunner()
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Keeps the runner going (an in-process one runs calls only inside this)."""
        if isinstance(self.runner, InProcessTaskRunner):
            async with self.runner.running():
                yield
        else:
            yield

    def register(self, server: Server[Any]) -> None:
        """Advertises the extension and serves ``tasks/get``, ``tasks/update`` and
        ``tasks/cancel`` (``tasks/result`` and ``tasks/list`` are gone in SEP-2663: the
        SDK answers them ``-32601``)."""
        server.extensions[EXTENSION] = {}
        server.add_request_handler("tasks/get", TaskParams, self.on_get)
        server.add_request_handler("tasks/update", UpdateParams, self.on_update)
        server.add_request_handler("tasks/cancel", TaskParams, self.on_cancel)

    # -- tools/call -----------------------------------------------------------------------

    def wanted(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> TaskBegins | None:
        """Whether this call runs as a task, and when it becomes one (``None``: a plain
        call); refuses an ``always`` one the client cannot take.

        Raises:
            MCPError: ``-32021`` for a ``task="always"`` action and a client without the
                extension.
        """
        mode_of = getattr(self.app, "task_mode", None)
        mode, begins = (
            ("never", "call") if mode_of is None else mode_of(params.name, params.arguments)
        )
        if mode == "never":
            return None
        if negotiated(ctx, _raw_meta(params)):
            return cast(TaskBegins, begins)
        if mode == "always":
            raise _refused()
        return None

    def _record(self, params: types.CallToolRequestParams, owner: str | None) -> TaskRecord:
        """A new working task for the call ``params``."""
        now = time.time()
        return TaskRecord(
            task_id=new_task_id(),
            owner=owner,
            params={"name": params.name, "arguments": dict(params.arguments or {})},
            status="working",
            created_at=now,
            updated_at=now,
            ttl_ms=self.ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
        )

    async def create(
        self,
        ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
        identity: Identity | None,
        owner: str | None,
    ) -> dict[str, Any]:
        """Creates the task, starts its call, and answers with the ``CreateTaskResult``.

        The task is in the store before the answer leaves, so an immediate ``tasks/get``
        finds it.
        """
        record = self._record(params, owner)
        await self.store.create(record)
        channel = self._channel(record.task_id, ctx)
        progress = self._progress(record.task_id)
        meta = ctx.meta

        async def call() -> None:
            try:
                response = await respond(
                    self.app, params.name, params.arguments, meta, progress, identity, channel
                )
            except ClientLacks as lack:
                await self._failed(record.task_id, missing_capability(lack))
            except Exception:
                logger.exception("task %s failed outside the app", record.task_id)
                await self._failed(record.task_id, None)
            else:
                await self._completed(record.task_id, response)

        await self._start(record, call, identity)
        return created(record)

    async def begin_in_handler(
        self,
        ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
        identity: Identity | None,
        owner: str | None,
        client: SdkClient,
    ) -> dict[str, Any] | types.InputRequiredResult:
        """Runs a ``task_begins="handler"`` call in its request until its handler calls
        ``ctx.continue_as_task()``: then the task is made and answered, and the handler
        goes on as it. Its questions before that are the call's own rounds.

        The handler runs in the runner's group from the start (it must outlive the request
        once it is a task), so this runs only with a runner in this process.
        """
        record = self._record(params, owner)
        settled = anyio.Event()
        answers: list[dict[str, Any] | types.InputRequiredResult | MCPError] = []

        def settle(answer: dict[str, Any] | types.InputRequiredResult | MCPError) -> None:
            if not settled.is_set():
                answers.append(answer)
                settled.set()

        async def begin() -> TaskChannel:
            await self.store.create(record)
            settle(created(record))
            return self._channel(record.task_id, ctx)

        channel = BeginningChannel(client, begin)
        to_task = self._progress(record.task_id)

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if channel.begun:
                await to_task(done, total, message)
            else:
                await ctx.session.report_progress(done, total, message)

        meta = ctx.meta

        async def call() -> None:
            try:
                response = await respond(
                    self.app, params.name, params.arguments, meta, progress, identity, channel
                )
            except InputNeeded as need:  # before the task: a round of the call itself
                settle(input_required(need))
            except ClientLacks as lack:
                refusal = missing_capability(lack)
                if channel.begun:
                    await self._failed(record.task_id, refusal)
                settle(refusal)
            except Exception:
                logger.exception("task %s failed outside the app", record.task_id)
                if channel.begun:
                    await self._failed(record.task_id, None)
                settle(MCPError(code=INTERNAL_ERROR, message="Internal error"))
            else:
                if channel.begun:
                    await self._completed(record.task_id, response)
                settle(call_result(response))

        await self._start(record, call)
        try:
            await settled.wait()
        except BaseException:  # the request went away before the call became a task
            await self.runner.cancel(record.task_id)
            raise
        answer = answers[0]
        if isinstance(answer, MCPError):
            raise answer
        return answer

    async def _start(
        self, record: TaskRecord, call: TaskCall, identity: Identity | None = None
    ) -> None:
        """Hands the call (and its caller, for a runner elsewhere) to the runner; a runner
        that cannot take it fails the task.

        Raises:
            MCPError: ``-32603`` saying why, when the runner refuses (an in-process runner
                outside ``running()``: a server built and served by hand).
        """
        try:
            await self.runner.start(record, call, identity)
        except RuntimeError as exc:
            logger.error("task %s not started: %s", record.task_id, exc)
            await self._failed(record.task_id, None)
            raise MCPError(code=INTERNAL_ERROR, message=f"Task not started: {exc}") from None

    def _channel(self, task_id: str, ctx: ServerRequestContext[Any]) -> TaskChannel:
        """The task's client: what the making request's client declared, questions in
        the store."""
        capabilities = ctx.session.client_capabilities
        poll = self.poll_interval_ms / 1000
        return TaskChannel(self.store, self.runner, task_id, capabilities, poll_seconds=poll)

    def _progress(self, task_id: str) -> Progress:
        """Progress reports of a task's call, kept as its last progress and statusMessage."""
        store = self.store

        async def progress(done: float, total: float | None, message: str | None) -> None:
            report: dict[str, Any] = {"progress": done}
            if total is not None:
                report["total"] = total
            text = None if message is None else message[:STATUS_MESSAGE_LIMIT]
            await store.update(task_id, progress=report, status_message=text)

        return progress

    async def _completed(self, task_id: str, response: ToolResponse) -> None:
        """Records the call's result: the task completed (a tool error too: isError)."""
        result = call_result(response)
        result.pop("resultType", None)  # the inlined result is the tool's, not a response
        await self.store.update(task_id, status="completed", result=result)

    async def _failed(self, task_id: str, refusal: MCPError | None) -> None:
        """Records a protocol-level failure (an internal error without ``refusal``)."""
        error: dict[str, Any] = {"code": INTERNAL_ERROR, "message": "Internal error"}
        if refusal is not None:
            error = {"code": refusal.error.code, "message": refusal.error.message}
            if refusal.error.data is not None:
                error["data"] = refusal.error.data
        await self.store.update(task_id, status="failed", error=error)

    # -- tasks/* --------------------------------------------------------------------------

    async def _owned(
        self, ctx: ServerRequestContext[Any], params: TaskParams, owner: str | None
    ) -> TaskRecord:
        """The caller's task ``params`` names, after the checks every ``tasks/*`` makes.

        Raises:
            MCPError: ``-32021`` without the extension, ``-32602`` for an unknown, expired
                or foreign task (never telling which). (An ``Mcp-Name`` naming another task
                is refused before, by the HTTP guard.)
        """
        if not negotiated(ctx, _raw_meta(params)):
            raise _refused()
        record = await self.store.get(params.task_id)
        if record is None or record.owner != owner:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown task: {params.task_id[:64]}")
        return record

    async def on_get(self, ctx: ServerRequestContext[Any], params: TaskParams) -> dict[str, Any]:
        """``tasks/get``: the task, with its result, error or questions."""
        return detailed(await self._owned(ctx, params, self.owner_of(ctx)))

    async def on_update(
        self, ctx: ServerRequestContext[Any], params: UpdateParams
    ) -> dict[str, Any]:
        """``tasks/update``: records the answers and wakes the task; an empty ack."""
        record = await self._owned(ctx, params, self.owner_of(ctx))
        await self.store.answer(record.task_id, params.input_responses)
        await self.runner.answered(record.task_id)
        return {}

    async def on_cancel(self, ctx: ServerRequestContext[Any], params: TaskParams) -> dict[str, Any]:
        """``tasks/cancel``: cancels a live task and stops its call; an empty ack, also
        for a task that has ended already."""
        record = await self._owned(ctx, params, self.owner_of(ctx))
        if not record.terminal:
            await self.store.request_cancel(record.task_id)
            await self.runner.cancel(record.task_id)
            await self.runner.answered(record.task_id)
        return {}


def _raw_meta(params: types.RequestParams) -> Mapping[str, Any] | None:
    """The request's ``_meta`` as sent (the per-request capabilities are in it)."""
    meta = params.meta
    if meta is None:
        return None
    if isinstance(meta, Mapping):
        return meta
    dumped = meta.model_dump(by_alias=True) if hasattr(meta, "model_dump") else None
    return dumped if isinstance(dumped, Mapping) else None
