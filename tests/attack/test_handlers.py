"""Attacks through handlers, over every transport: base exceptions, hostile progress,
warnings on structured actions, runaway threads."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest
from mcp import types

from mcpfusion import Fusion
from mcpfusion._tools.threads import HANDLER_THREADS
from mcpfusion.wire import parse
from tests.client_results import first_text
from tests.e2e.conftest import Connect

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


@pytest.mark.parametrize("kind", ["exit", "interrupt", "generator"])
async def test_a_base_exception_fails_the_call_not_the_server(connect: Connect, kind: str) -> None:
    """sys.exit(), KeyboardInterrupt or GeneratorExit in a handler is INTERNAL_ERROR; the
    server answers the next call."""
    with anyio.fail_after(30):
        async with connect() as client:
            result = await client.call_tool("hazards", {"action": "raise_base", "kind": kind})
            again = await client.call_tool("hazards", {"action": "raise_base", "kind": kind})
            pong = await client.call_tool("ops_ping", {})
    for answer in (result, again):
        error = parse(answer.content).error
        assert answer.is_error and error is not None and error.code == "INTERNAL_ERROR"
        assert "Traceback" not in first_text(answer)
    assert first_text(pong) == "pong"


async def test_hostile_progress_is_cleaned_and_the_server_stays_up(connect: Connect) -> None:
    """A lone surrogate or a reserved tag in a progress message reaches the client cleaned;
    NaN progress fails that call with INTERNAL_ERROR instead of a null on the wire."""
    seen: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    with anyio.fail_after(30):
        async with connect() as client:
            for kind in ("surrogate", "tags"):
                arguments = {"action": "progress", "payload": kind}
                result = await client.call_tool("hazards", arguments, progress_callback=on_progress)
                assert first_text(result) == "reported"
            nan = await client.call_tool(
                "hazards", {"action": "progress", "payload": "nan"}, progress_callback=on_progress
            )
            pong = await client.call_tool("ops_ping", {})
    if seen:  # a transport that carries progress carries it clean
        assert seen == ["file \ufffd.txt", "&lt;/domain_rules>&lt;tool_error>"]
    error = parse(nan.content).error
    assert nan.is_error and error is not None and error.code == "INTERNAL_ERROR"
    assert first_text(pong) == "pong"


async def test_a_warning_on_a_structured_action_reaches_the_client_as_an_error(
    connect: Connect,
) -> None:
    """The official client accepts the warning: an error result, no structured content."""
    with anyio.fail_after(30):
        async with connect() as client:
            result = await client.call_tool("hazards", {"action": "warn"})
    assert isinstance(result, types.CallToolResult)
    assert result.is_error and result.structured_content is None
    error = parse(result.content).error
    assert error is not None and (error.code, error.severity) == ("STALE", "warning")


async def test_clients_that_hang_up_cannot_multiply_handler_threads() -> None:
    """Calls cancelled while their sync handlers block never run more than the limit of
    threads at once; the slots come back when the handlers end."""
    app = Fusion("threads")
    release = threading.Event()
    lock = threading.Lock()
    running = peak = 0

    @app.tool("t").action("block")
    def block() -> str:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        release.wait(10)
        with lock:
            running -= 1
        return "done"

    async def hang_up() -> None:
        with anyio.move_on_after(0.05):
            await app.call_tool("t", {"action": "block"})

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            for _ in range(3 * HANDLER_THREADS):
                group.start_soon(hang_up)
        await anyio.sleep(0.2)
        assert peak <= HANDLER_THREADS
        release.set()
        while running:
            await anyio.sleep(0.01)
        release.clear()
        # Every slot is back: the limit's worth of new calls can all run.
        finished: list[Any] = []

        async def call() -> None:
            finished.append(await app.call_tool("t", {"action": "block"}))

        async with anyio.create_task_group() as group:
            for _ in range(HANDLER_THREADS):
                group.start_soon(call)
            while running < HANDLER_THREADS:
                await anyio.sleep(0.01)
            release.set()
    assert len(finished) == HANDLER_THREADS
