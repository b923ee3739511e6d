"""MCP tasks (SEP-2663) on the SDK's server: creating tasks, ``tasks/*`` and the task's client."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, cast

import anyio
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import CLIENT_CAPABILITIES_META_KEY, MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ConfigDict, Field, ValidationError

from mcpfusion._errors import ToolError
from mcpfusion._identity import Identity
from mcpfusion._present.response import ToolResponse
from mcpfusion._serve.channel import Channel, Notices, R
from mcpfusion._serve.protocol import ServableApp
from mcpfusion._serve.results import call_result, respond
from mcpfusion._serve.sdk_client import SdkClient, declares, input_required, missing_capability
from mcpfusion._tasks.runner import InProcessTaskRunner, TaskRunner
from mcpfusion._tasks.store import MemoryTaskStore, TaskRecord, TaskStore, new_task_id
from mcpfusion._tasks.wire import EXTENSION, created, detailed
from mcpfusion._tools.action import TaskBegins
from mcpfusion._tools.client import ClientLacks, Feature, InputNeeded, LogLevel
from mcpfusion._tools.context import Progress

__all__ = ["TaskService"]

logger = logging.getLogger("mcpfusion")

HEADER_MISMATCH: Final = -32020
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
STATUS_MESSAGE_LIMIT: Final = 500
"""A log line or progress message becomes the task's ``statusMessage``, cut to this."""


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
    return isinstance(raw, Mapping) and EXTENSION in (raw.get("extensions") or {})


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
        channel = TaskChannel(self, record.task_id, ctx.session.client_capabilities)
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

        await self.runner.start(record, call, identity)
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
            return TaskChannel(self, record.task_id, ctx.session.client_capabilities)

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

        await self.runner.start(record, call)
        try:
            await settled.wait()
        except BaseException:  # the request went away before the call became a task
            await self.runner.cancel(record.task_id)
            raise
        answer = answers[0]
        if isinstance(answer, MCPError):
            raise answer
        return answer

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
            MCPError: ``-32021`` without the extension, ``-32020`` when ``Mcp-Name``
                names another task, ``-32602`` for an unknown, expired or foreign task
                (never telling which).
        """
        if not negotiated(ctx, _raw_meta(params)):
            raise _refused()
        request = ctx.request
        if request is not None:
            header = request.headers.get("mcp-name")
            if header is not None and header.strip() != params.task_id:
                raise MCPError(
                    code=HEADER_MISMATCH, message="Mcp-Name header does not match taskId"
                )
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


class TaskChannel(Channel):
    """The client of a task's call: questions wait in the task for ``tasks/update``,
    log lines and progress become its ``statusMessage``."""

    protocol_refusals = True  # a task belongs to 2026-07-28, which refuses with -32021
    asks_at_once = True  # questions wait in place: ctx.gather leaves them pending together

    def __init__(
        self,
        service: TaskService,
        task_id: str,
        capabilities: types.ClientCapabilities | None,
        hub: Notices | None = None,
    ) -> None:
        super().__init__(hub)
        self._service = service
        self._task_id = task_id
        self._capabilities = capabilities
        self._asked = 0

    def supports(self, feature: Feature) -> bool:
        """What the client declared when it made the task (logging always reaches it)."""
        return declares(self._capabilities, feature)

    async def log(self, level: LogLevel, data: Any, logger: str) -> None:
        """Makes the line the task's ``statusMessage``."""
        text = data if isinstance(data, str) else json.dumps(data, default=str)
        await self._service.store.update(self._task_id, status_message=text[:STATUS_MESSAGE_LIMIT])

    async def _ask(self, request: types.ServerRequest, kind: type[R], key: str | None) -> R:
        """Parks the question in the task (``input_required``) until the client answers."""
        if key is None:
            key = f"q{self._asked}"
        self._asked += 1
        wire = request.model_dump(by_alias=True, mode="json", exclude_none=True)
        store, runner = self._service.store, self._service.runner
        wait = self._service.poll_interval_ms / 1000
        await store.update(self._task_id, status="input_required", add_input_requests={key: wire})
        while True:
            record = await store.get(self._task_id)
            if record is None or record.terminal:
                raise RuntimeError(f"task {self._task_id} ended while waiting for input")
            if key in record.input_responses:
                try:
                    return kind.model_validate(record.input_responses[key])
                except ValidationError:
                    raise ToolError(
                        "INVALID_ANSWER",
                        f"The client's answer to {key!r} does not fit the question.",
                    ) from None
            await runner.wait(self._task_id, wait)


class BeginningChannel(Channel):
    """The client of a ``task_begins="handler"`` call: the request's own channel (its
    questions are the call's rounds) until ``continue_as_task``, the task's after."""

    def __init__(self, first: SdkClient, begin: Callable[[], Awaitable[TaskChannel]]) -> None:
        super().__init__(None)
        self._current: Channel = first
        self._begin = begin
        self.begun = False
        self.protocol_refusals = first.protocol_refusals

    @property
    def asks_at_once(self) -> bool:
        """Whether questions wait in place: once the call is a task."""
        return self.begun

    async def continue_as_task(self) -> None:
        """Makes the task (answering the request with it) and talks through it from now."""
        if not self.begun:
            self._current = await self._begin()
            self.begun = True

    def supports(self, feature: Feature) -> bool:
        """What the current channel's client supports."""
        return self._current.supports(feature)

    async def close_sse_stream(self) -> bool:
        """Closes the request's stream, before the task only."""
        return await self._current.close_sse_stream()

    async def log(self, level: LogLevel, data: Any, logger: str) -> None:
        """Logs through the current channel."""
        await self._current.log(level, data, logger)

    async def _ask(self, request: types.ServerRequest, kind: type[R], key: str | None) -> R:
        return await self._current._ask(request, kind, key)

    async def invalidated(self, patterns: Sequence[str], identity: Identity | None) -> None:
        """Tells subscribers through the request's channel (the task's tells no one)."""
        await self._current.invalidated(patterns, identity)
