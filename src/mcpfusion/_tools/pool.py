"""Worker threads for sync handlers on asyncio, handed work awake where a spin saves a wake-up."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import math
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Final, TypeVar

T = TypeVar("T")

IDLE_SECONDS: Final = 10.0
"""A worker thread without work for this long ends (anyio's workers wait as long)."""

SPIN_SECONDS: Final = 50e-6
"""How long the loop waits for a quick handler, and a worker for its next job, awake."""

HANDOFF_SECONDS: Final = 1.0
"""The event loop waits at most this long for a worker thread to take a job (it takes
one in microseconds; the bound only keeps a lost job from stopping the loop)."""

# Yields the CPU without the GIL and without sleeping (``time.sleep(0)`` sleeps the timer
# slack, ~50 µs on Linux). Where the OS has none (Windows), nothing spins.
_yield: Final[Callable[[], None] | None] = getattr(os, "sched_yield", None)


class Pace:
    """Whether one action's handler last ran within the spin: the loop then waits for it.

    A handler that blocks (a query, a file) is not spun for: its caller awaits at once,
    and the loop serves others. Its next call is spun for again once a run was quick.
    """

    __slots__ = ("quick",)

    def __init__(self) -> None:
        self.quick = True


class _Job:
    """One call handed to a worker: the work, then its outcome and who hears of it."""

    __slots__ = (
        "context",
        "elapsed",
        "fn",
        "future",
        "lock",
        "loop",
        "outcome",
        "queued_at",
        "taken",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop, fn: Callable[[], Any]) -> None:
        self.loop = loop
        self.fn = fn
        self.context = contextvars.copy_context()
        self.lock = threading.Lock()  # orders ``finish`` and ``detach``
        self.taken = threading.Lock()  # held until a worker has the job
        self.taken.acquire()
        self.future: asyncio.Future[Any] | None = None  # set once the caller sleeps
        self.outcome: tuple[Any, BaseException | None] | None = None
        self.elapsed = 0.0
        self.queued_at = time.perf_counter()

    def run(self) -> tuple[Any, BaseException | None]:
        """In the worker: runs the work in the caller's context; its value or error."""
        start = time.perf_counter()
        try:
            outcome: tuple[Any, BaseException | None] = (self.context.run(self.fn), None)
        except BaseException as exc:
            outcome = (None, exc)
        self.elapsed = time.perf_counter() - start
        return outcome

    def finish(self, outcome: tuple[Any, BaseException | None]) -> None:
        """In the worker: hands the outcome to its caller, waking the loop only if it sleeps."""
        with self.lock:
            self.outcome = outcome
            future = self.future
        # A caller still spinning reads the outcome itself: no loop wake-up to pay.
        if future is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                self.loop.call_soon_threadsafe(_settle, future, *outcome)

    def detach(self) -> asyncio.Future[Any]:
        """On the loop: a future for the outcome, settled by the worker if still running."""
        future = self.loop.create_future()
        with self.lock:
            outcome = self.outcome
            if outcome is None:
                self.future = future
                return future
        _settle(future, *outcome)
        return future


class _Pool:
    """Worker threads for sync handlers on asyncio: a job is a queue put and a spin.

    A thread that sleeps costs its waker tens of microseconds to wake on an idle core;
    a round trip wakes two (the worker, then the loop). So the caller first waits awake
    for a quick handler (``spin_seconds``, yielding the CPU and the GIL) and takes its
    outcome without a wake-up, and a worker that finished a job waits as long for the
    next one before it sleeps when its jobs have been coming close behind each other.
    Only one worker spins at a time, and nothing spins while the server is idle. The loop
    waits (without the GIL) until a worker has taken the job: see ``submit``. The
    slots of ``run_in_thread`` bound how many jobs run; an idle thread ends after
    ``idle_seconds``.
    """

    def __init__(
        self, idle_seconds: float = IDLE_SECONDS, spin_seconds: float = SPIN_SECONDS
    ) -> None:
        self._idle_seconds = idle_seconds
        self._spin_seconds = spin_seconds if _yield is not None else 0.0
        self._forget_threads()

    def _forget_threads(self) -> None:
        """Starts afresh: no queued job, no idle thread (a forked child has no thread)."""
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)  # one token per thread waiting for a job
        self._spinner = threading.Lock()  # held by the one worker spinning for a job

    def submit(self, loop: asyncio.AbstractEventLoop, fn: Callable[[], Any]) -> _Job:
        """Queues ``fn`` to an idle worker, starting one when none is idle, and returns
        once a worker has taken it."""
        job = _Job(loop, fn)
        self._jobs.put(job)
        if not self._idle.acquire(blocking=False):
            serve = functools.partial(self._serve, self._jobs, self._idle, self._spinner)
            threading.Thread(target=serve, name="mcpfusion-handler", daemon=True).start()
        # The woken thread needs the GIL to take its job. A loop that never waits (a
        # client polling tasks/get in the same loop, in process) drops the GIL only for
        # the instant of each zero-timeout epoll, and every such drop restarts the woken
        # thread's switch-interval wait, so it could wait seconds. Here the loop yields
        # the GIL until the job is taken: awake for the spin (a spinning worker takes it
        # at once, and the loop needs no wake-up), then blocked: the hand-off is an
        # event, not a race. Bounded so that a job no thread takes (a bug) cannot stop
        # the loop for good.
        if _spin(functools.partial(_took, job.taken), self._spin_seconds) is None:
            job.taken.acquire(timeout=HANDOFF_SECONDS)
        return job

    def run(self, loop: asyncio.AbstractEventLoop, fn: Callable[[], T]) -> asyncio.Future[T]:
        """Queues ``fn``; the future settles with its result. Cancelling the future
        abandons the job: its thread runs on and its result is dropped."""
        return self.submit(loop, fn).detach()

    async def call(self, loop: asyncio.AbstractEventLoop, fn: Callable[[], T], pace: Pace) -> T:
        """Runs ``fn`` in a worker; waits awake for it first when ``pace`` says it is quick.

        Raises:
            BaseException: what ``fn`` raised.
        """
        job = self.submit(loop, fn)
        if pace.quick and self._spin_seconds:
            outcome = _spin(lambda: job.outcome, self._spin_seconds)
            if outcome is not None:
                if outcome[1] is not None:
                    raise outcome[1]
                result: T = outcome[0]
                return result
        try:
            result = await job.detach()
        finally:
            # Cancelled, the worker may not be done: ``elapsed`` is then 0, a quick guess.
            pace.quick = job.elapsed < self._spin_seconds
        return result

    def _serve(
        self, jobs: queue.SimpleQueue[_Job], idle: threading.Semaphore, spinner: threading.Lock
    ) -> None:
        # The queue and tokens it was started for: a pool started afresh has its own.
        # A spinning worker takes the GIL between its polls, slowing a loop that has other
        # work: it spins only while its jobs come close behind each other (a caller's next
        # call made at once), not when a request's network round trip lies between them.
        spin = False
        done_at = -math.inf
        while True:
            job = None  # nothing held while waiting
            if spin and spinner.acquire(blocking=False):
                try:
                    job = _spin(functools.partial(_poll, jobs), self._spin_seconds)
                finally:
                    spinner.release()
            if job is None:
                try:
                    job = jobs.get(timeout=self._idle_seconds)
                except queue.Empty:
                    if idle.acquire(blocking=False):
                        return  # its own token: no caller counted on this thread
                    spin = False
                    continue  # a caller took its token and queued a job for it
            job.taken.release()
            spin = job.queued_at - done_at < self._spin_seconds
            outcome = job.run()
            # Idle before the caller hears of it: its next job then finds this thread
            # rather than starting another one.
            idle.release()
            job.finish(outcome)
            del outcome
            done_at = time.perf_counter()


def _spin(check: Callable[[], T | None], seconds: float) -> T | None:
    """What ``check`` returns once it is not ``None``, asked until ``seconds`` pass."""
    found = check()
    if found is not None or _yield is None:
        return found
    clock = time.perf_counter
    deadline = clock() + seconds
    while clock() < deadline:
        _yield()  # the GIL is free meanwhile: the other thread runs
        found = check()
        if found is not None:
            return found
    return None


def _took(taken: threading.Lock) -> bool | None:
    return taken.acquire(blocking=False) or None


def _poll(jobs: queue.SimpleQueue[_Job]) -> _Job | None:
    try:
        return jobs.get_nowait()
    except queue.Empty:
        return None


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.cancelled():  # its caller left (abandon on cancel)
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


POOL: Final = _Pool()
# A forked child inherits the idle tokens but not the threads: its jobs would wait forever.
os.register_at_fork(after_in_child=POOL._forget_threads)
