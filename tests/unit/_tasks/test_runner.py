"""The in-process task runner: calls outlive their starter, and cancel stops them."""

from __future__ import annotations

import anyio
import pytest

from mcpfusion._tasks.runner import InProcessTaskRunner
from mcpfusion._tasks.store import TaskRecord

pytestmark = pytest.mark.anyio


def record(task_id: str = "t1") -> TaskRecord:
    """A working task record."""
    return TaskRecord(task_id, None, {"name": "x"}, "working", 0.0, 0.0)


async def test_a_call_runs_in_the_background_until_done() -> None:
    """``start`` returns at once; the call runs in the runner's group to its end."""
    runner = InProcessTaskRunner()
    done = anyio.Event()

    async def call() -> None:
        await anyio.sleep(0)
        done.set()

    with anyio.fail_after(10):
        async with runner.running():
            await runner.start(record(), call)
            await done.wait()


async def test_cancel_stops_the_call_at_its_next_await() -> None:
    """``cancel`` cancels the call's scope: a call waiting forever ends, cancelled."""
    runner = InProcessTaskRunner()
    started, stopped = anyio.Event(), anyio.Event()

    async def call() -> None:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            stopped.set()

    with anyio.fail_after(10):
        async with runner.running():
            await runner.start(record(), call)
            await started.wait()
            await runner.cancel("t1")
            await stopped.wait()


async def test_answered_wakes_a_waiting_call() -> None:
    """``wait`` returns as soon as ``answered`` is called for the task."""
    runner = InProcessTaskRunner()
    woke = anyio.Event()

    async def call() -> None:
        await runner.wait("t1", timeout=3600)
        woke.set()

    with anyio.fail_after(10):
        async with runner.running():
            await runner.start(record(), call)
            while not woke.is_set():
                await runner.answered("t1")
                await anyio.sleep(0)


async def test_start_outside_running_is_refused() -> None:
    """Starting a call while the runner is not running raises instead of losing it."""

    async def call() -> None:
        return None

    with pytest.raises(RuntimeError, match="not running"):
        await InProcessTaskRunner().start(record(), call)


async def test_calls_still_running_end_with_the_runner() -> None:
    """Leaving ``running()`` cancels the calls still going."""
    runner = InProcessTaskRunner()
    stopped = anyio.Event()

    async def call() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            stopped.set()

    with anyio.fail_after(10):
        async with runner.running():
            await runner.start(record(), call)
            await anyio.sleep(0)
        await stopped.wait()
    assert not runner.ready
