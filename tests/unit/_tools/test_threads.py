"""Unit tests for _tools.threads: sync handlers on the light worker pool."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
import time
from typing import Any

import anyio
import pytest

from mcpfusion import Fusion
from mcpfusion._tools import threads
from mcpfusion._tools.pool import Pace, _Pool
from mcpfusion._tools.threads import ThreadExit, run_in_thread

pytestmark = pytest.mark.anyio

COLOUR: contextvars.ContextVar[str] = contextvars.ContextVar("colour", default="none")


async def test_work_sees_the_callers_context_variables() -> None:
    """A sync handler reads the context variables its caller set."""
    COLOUR.set("blue")
    assert await run_in_thread(COLOUR.get, lambda: None) == "blue"


async def test_sequential_calls_reuse_one_worker_thread() -> None:
    """Calls one after another run on the same idle thread, not on a new one each."""
    name = await run_in_thread(lambda: threading.current_thread().name, lambda: None)
    idents = {await run_in_thread(threading.get_ident, lambda: None)}
    for _ in range(20):
        idents.add(await run_in_thread(threading.get_ident, lambda: None))
    assert len(idents) == 1 and str(name).startswith("mcpfusion-handler")


async def test_an_exception_reaches_the_caller_and_a_base_exception_is_carried() -> None:
    """An ``Exception`` propagates as it is; ``SystemExit`` arrives as ``ThreadExit``."""

    def fail() -> None:
        raise ValueError("bad row")

    def leave() -> None:
        raise SystemExit(3)

    with pytest.raises(ValueError, match="bad row"):
        await run_in_thread(fail, lambda: None)
    with pytest.raises(ThreadExit, match="SystemExit"):
        await run_in_thread(leave, lambda: None)


async def test_a_cancelled_caller_stops_waiting_and_the_work_finishes_alone() -> None:
    """A cancelled caller returns at once and ``on_cancel`` runs; the work finishes alone."""
    started, release, finished = threading.Event(), threading.Event(), threading.Event()
    told: list[bool] = []

    def work() -> str:
        started.set()
        release.wait(10)
        finished.set()
        return "late"

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:

            async def call() -> None:
                await run_in_thread(work, lambda: told.append(True))

            group.start_soon(call)
            while not started.is_set():
                await anyio.sleep(0.01)
            group.cancel_scope.cancel()
        assert told == [True] and not finished.is_set()
        release.set()
        while not finished.is_set():
            await anyio.sleep(0.01)


async def test_an_idle_thread_ends() -> None:
    """A worker thread without work ends after its idle time."""
    pool = _Pool(idle_seconds=0.01)
    loop = asyncio.get_running_loop()
    thread: Any = await pool.run(loop, threading.current_thread)
    with anyio.fail_after(10):
        while thread.is_alive():
            await anyio.sleep(0.01)


def test_a_sync_handler_answers_through_the_app() -> None:
    """A sync action's value comes back through ``call_tool`` as its response."""
    app = Fusion("threads")
    app.tool("t").action("ping")(lambda: "pong")

    async def call() -> Any:
        return await app.call_tool("t", {"action": "ping"})

    assert anyio.run(call).blocks == ("pong",)


async def test_a_pool_that_forgot_its_threads_starts_a_new_one() -> None:
    """After a fork (``_forget_threads``) the next job gets a new thread, not an old one."""
    pool = _Pool(idle_seconds=0.05)
    loop = asyncio.get_running_loop()
    with anyio.fail_after(10):
        first = await pool.run(loop, threading.current_thread)
        pool._forget_threads()
        second = await pool.run(loop, threading.current_thread)
    assert first is not second


async def test_a_quick_handler_is_answered_while_the_loop_waits_awake() -> None:
    """Within the spin a quick handler's outcome is taken without a turn of the loop."""
    pool, pace = _Pool(spin_seconds=10.0), Pace()
    loop = asyncio.get_running_loop()
    turns: list[int] = []

    def fail() -> None:
        raise ValueError("bad row")

    loop.call_soon(turns.append, 1)
    assert await pool.call(loop, lambda: "pong", pace) == "pong"
    with pytest.raises(ValueError, match="bad row"):
        await pool.call(loop, fail, pace)
    assert turns == [] and pace.quick


async def test_quick_calls_answered_through_the_spin_reuse_one_thread() -> None:
    """A worker is counted idle before its caller reads the outcome: no second thread starts."""
    pool, pace = _Pool(spin_seconds=10.0), Pace()
    loop = asyncio.get_running_loop()
    names = {await pool.call(loop, threading.get_ident, pace)}
    for _ in range(200):
        names.add(await pool.call(loop, threading.get_ident, pace))
    assert len(names) == 1


async def test_a_slow_handler_is_awaited_and_its_next_call_not_spun_for() -> None:
    """A run longer than the spin marks the pace slow; its next call yields to the loop."""
    pool, pace = _Pool(spin_seconds=0.001), Pace()
    loop = asyncio.get_running_loop()

    def slow() -> str:
        time.sleep(0.005)
        return "late"

    with anyio.fail_after(10):
        assert await pool.call(loop, slow, pace) == "late"
    assert not pace.quick
    pool._spin_seconds = 5.0  # a spin now would keep the loop from turning for 5 s
    turned = threading.Event()
    loop.call_soon(turned.set)
    # The handler ends once the loop turns: at once if its caller awaits, after 5 s
    # (reporting that it never saw the turn) if the caller spun.
    assert await pool.call(loop, functools.partial(turned.wait, 5), pace) is True
    assert pace.quick


def test_an_action_remembers_that_its_sync_handler_blocks() -> None:
    """A sync action whose handler outlasts the spin is awaited at once on its next call."""
    app = Fusion("threads")
    tool = app.tool("t")

    @tool.action("wait")
    def wait() -> str:
        time.sleep(0.005)
        return "done"

    async def call() -> Any:
        return await app.call_tool("t", {"action": "wait"})

    assert anyio.run(call).blocks == ("done",)
    assert not tool.actions["wait"]._pace.quick


async def test_a_job_is_taken_by_a_thread_before_the_loop_goes_on() -> None:
    """``run`` returns once a worker thread holds the job (new or idle thread alike), so a
    loop that never waits (a client polling in process) cannot keep it from the GIL."""
    pool = _Pool()
    loop = asyncio.get_running_loop()
    release = threading.Event()
    taken: list[bool] = []
    with anyio.fail_after(10):
        for _ in range(2):  # the first job starts a thread; the second finds it idle
            job = pool.run(loop, functools.partial(release.wait, 10))
            taken.append(pool._jobs.empty())  # no await in between: the loop did not wait
            release.set()
            await job
            release.clear()
    assert taken == [True, True]


def test_each_event_loop_has_its_own_handler_slots() -> None:
    """The remembered limiter is the running loop's: a second loop gets slots of its own."""

    async def slots() -> tuple[object, object]:
        loop = asyncio.get_running_loop()
        return threads._running_limiter(loop), threads._running_limiter(loop)

    first, again = anyio.run(slots)
    second, _ = anyio.run(slots)
    assert first is again
    assert second is not first
