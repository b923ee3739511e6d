"""The client of a task's call: questions parked in the task, logs as its status message."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from mcp import types
from pydantic import ValidationError

from mcpfusion._errors import ToolError
from mcpfusion._identity import Identity
from mcpfusion._serve.channel import Channel, R
from mcpfusion._serve.sdk_client import SdkClient, declares
from mcpfusion._tasks.runner import TaskRunner
from mcpfusion._tasks.store import TaskStore
from mcpfusion._tools.client import Feature, LogLevel

__all__ = ["STATUS_MESSAGE_LIMIT", "BeginningChannel", "TaskChannel"]

STATUS_MESSAGE_LIMIT: Final = 500
"""A log line or progress message becomes the task's ``statusMessage``, cut to this."""


class TaskChannel(Channel):
    """The client of a task's call: questions wait in the task for ``tasks/update``,
    log lines and progress become its ``statusMessage``."""

    protocol_refusals = True  # a task belongs to 2026-07-28, which refuses with -32021
    asks_at_once = True  # questions wait in place: ctx.gather leaves them pending together

    def __init__(
        self,
        store: TaskStore,
        runner: TaskRunner,
        task_id: str,
        capabilities: types.ClientCapabilities | None,
        *,
        poll_seconds: float,
    ) -> None:
        super().__init__(None)  # a task tells no subscriber: its request has ended
        self._store = store
        self._runner = runner
        self._task_id = task_id
        self._capabilities = capabilities
        self._poll_seconds = poll_seconds
        self._asked = 0

    def supports(self, feature: Feature) -> bool:
        """What the client declared when it made the task (logging always reaches it)."""
        return declares(self._capabilities, feature)

    async def log(self, level: LogLevel, data: Any, logger: str) -> None:
        """Makes the line the task's ``statusMessage``."""
        text = data if isinstance(data, str) else json.dumps(data, default=str)
        await self._store.update(self._task_id, status_message=text[:STATUS_MESSAGE_LIMIT])

    async def _ask(self, request: types.ServerRequest, kind: type[R], key: str | None) -> R:
        """Parks the question in the task (``input_required``) until the client answers."""
        if key is None:
            key = f"q{self._asked}"
        self._asked += 1
        wire = request.model_dump(by_alias=True, mode="json", exclude_none=True)
        store = self._store
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
            # Woken by tasks/update (the in-process runner), else polled: any runner works.
            await self._runner.wait(self._task_id, self._poll_seconds)


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
