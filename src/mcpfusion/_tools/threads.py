"""Sync handlers in worker threads, counted while they run, not while their callers wait.

A thread cannot be interrupted. When a call is cancelled (its client left, a timeout) the
caller stops waiting at once, but the handler's thread runs on to the end of the handler;
its slot is held until then, so clients that hang up can never make more than
``HANDLER_THREADS`` handler threads run at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import math
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, Final, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from anyio.lowlevel import RunVar

T = TypeVar("T")

HANDLER_THREADS: Final = 40
"""At most this many sync handlers run at once (anyio's default worker count)."""

_RUNNING: RunVar[anyio.CapacityLimiter] = RunVar("mcpfusion_handler_threads")
_UNBOUNDED: RunVar[anyio.CapacityLimiter] = RunVar("mcpfusion_unbounded")

IDLE_SECONDS: Final = 10.0
"""A worker thread without work for this long ends (anyio's workers wait as long)."""

HANDOFF_SECONDS: Final = 1.0
"""The event loop waits at most this long for a worker thread to take a job (it takes
one in microseconds; the bound only keeps a lost job from stopping the loop)."""

_PENDING, _RUNNING_STATE, _ORPHANED, _DONE, _ABANDONED = range(5)


class ThreadExit(Exception):
    """A ``BaseException`` a handler raised in its thread (``SystemExit``, ``GeneratorExit``,
    ``KeyboardInterrupt``), carried back as an ``Exception`` (its ``__cause__``).

    Raised raw across anyio's thread boundary, a ``GeneratorExit`` ends the task that
    awaited it even after that task caught it; carried, it fails just its call.
    """


def _limiter(var: RunVar[anyio.CapacityLimiter], tokens: float) -> anyio.CapacityLimiter:
    try:
        return var.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(tokens)
        var.set(limiter)
        return limiter


class _Slot:
    """One running-thread slot and who gives it back: the caller, or an orphaned thread."""

    __slots__ = ("_limiter", "_lock", "_loop", "_state")

    def __init__(
        self, limiter: anyio.CapacityLimiter, loop: asyncio.AbstractEventLoop | None
    ) -> None:
        self._limiter = limiter
        self._loop = loop  # None: another backend, whose worker threads anyio runs
        self._lock = threading.Lock()
        self._state = _PENDING

    def start(self) -> bool:
        """In the thread: whether to run (the caller may have left before it started)."""
        with self._lock:
            if self._state == _ABANDONED:
                return False
            self._state = _RUNNING_STATE
            return True

    def finish(self) -> None:
        """In the thread, after the handler: an orphaned thread gives its slot back."""
        with self._lock:
            orphaned = self._state == _ORPHANED
            self._state = _DONE
        if orphaned:
            # RuntimeError: the event loop is gone, and the limiter with it.
            with contextlib.suppress(RuntimeError):
                if self._loop is not None:
                    self._loop.call_soon_threadsafe(self._limiter.release_on_behalf_of, self)
                else:
                    anyio.from_thread.run_sync(self._limiter.release_on_behalf_of, self)

    def leave(self) -> None:
        """On the loop, when the caller is cancelled: release now unless the thread runs."""
        with self._lock:
            if self._state == _RUNNING_STATE:
                self._state = _ORPHANED
                return
            self._state = _ABANDONED
        self._limiter.release_on_behalf_of(self)


async def run_in_thread(fn: Callable[[], T], on_cancel: Callable[[], None]) -> T | None:
    """Runs ``fn`` in a worker thread, waiting for a free slot first.

    Args:
        fn: the work; its exceptions (any ``BaseException``) propagate to the caller.
        on_cancel: called on the event loop when the caller is cancelled, so the work
            can see it (``ctx.cancelled``) and stop early.

    Returns:
        What ``fn`` returned (``None`` only if it never started).
    """
    limiter = _limiter(_RUNNING, HANDLER_THREADS)
    loop = _asyncio_loop()
    slot = _Slot(limiter, loop)
    try:
        # A free slot (the common case) is taken without anyio's two checkpoints, a loop
        # round trip each: awaiting the thread is the call's checkpoint.
        limiter.acquire_on_behalf_of_nowait(slot)
    except anyio.WouldBlock:
        await limiter.acquire_on_behalf_of(slot)

    def work() -> T | None:
        if not slot.start():
            return None
        try:
            return fn()
        except Exception:
            raise
        except BaseException as exc:
            raise ThreadExit(type(exc).__name__) from exc
        finally:
            slot.finish()

    try:
        if loop is not None:
            result = await _POOL.run(loop, work)
        else:  # Our slots bound the threads; anyio's own limiter would count waiting callers.
            result = await anyio.to_thread.run_sync(
                work, abandon_on_cancel=True, limiter=_limiter(_UNBOUNDED, math.inf)
            )
    except anyio.get_cancelled_exc_class():
        on_cancel()
        slot.leave()
        raise
    except BaseException:
        limiter.release_on_behalf_of(slot)
        raise
    limiter.release_on_behalf_of(slot)
    return result


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop; ``None`` under another backend (trio)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class _Pool:
    """Worker threads for sync handlers on asyncio: a job is a queue put and a future.

    anyio's ``to_thread.run_sync`` costs a cancel scope, a checkpoint and a result queue
    per call on top of the two thread wake-ups no hand-off avoids. Here a job is queued to
    an idle thread (one is started when none is idle) and the loop waits until the thread
    has taken it; it runs in a copy of the caller's context and settles the caller's
    future through ``call_soon_threadsafe``. The slots of ``run_in_thread`` bound how many
    run; an idle thread ends after ``idle_seconds``.
    """

    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self._idle_seconds = idle_seconds
        self._forget_threads()

    def _forget_threads(self) -> None:
        """Starts afresh: no queued job, no idle thread (a forked child has no thread)."""
        self._jobs: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)  # one token per thread waiting for a job

    def run(self, loop: asyncio.AbstractEventLoop, fn: Callable[[], T]) -> asyncio.Future[T]:
        """Queues ``fn`` and returns once a worker thread has taken it; the future settles
        with its result. Cancelling the future abandons the job: its thread runs on and
        its result is dropped."""
        future: asyncio.Future[T] = loop.create_future()
        taken = threading.Lock()
        taken.acquire()
        self._jobs.put((loop, future, contextvars.copy_context(), fn, taken))
        if not self._idle.acquire(blocking=False):
            serve = functools.partial(self._serve, self._jobs, self._idle)
            threading.Thread(target=serve, name="mcpfusion-handler", daemon=True).start()
        # The woken thread needs the GIL to take its job. A loop that never waits (a
        # client polling tasks/get in the same loop, in process) drops the GIL only for
        # the instant of each zero-timeout epoll, and every such drop restarts the woken
        # thread's switch-interval wait, so it could wait seconds. Blocked here, the loop
        # holds no GIL until the job is taken: the hand-off is an event, not a race.
        # Bounded so that a job no thread takes (a bug) cannot stop the loop for good.
        taken.acquire(timeout=HANDOFF_SECONDS)
        return future

    def _serve(self, jobs: queue.SimpleQueue[tuple[Any, ...]], idle: threading.Semaphore) -> None:
        # The queue and tokens it was started for: a pool started afresh has its own.
        while True:
            try:
                loop, future, context, fn, taken = jobs.get(timeout=self._idle_seconds)
            except queue.Empty:
                if idle.acquire(blocking=False):
                    return  # its own token: no caller counted on this thread
                continue  # a caller took its token and queued a job for it
            taken.release()
            try:
                value, error = context.run(fn), None
            except BaseException as exc:
                value, error = None, exc
            # Idle before the caller hears of it: its next job then finds this thread
            # rather than starting another one.
            idle.release()
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(_settle, future, value, error)
            del loop, future, context, fn, taken, value, error  # nothing held while idle


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.cancelled():  # its caller left (abandon on cancel)
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


_POOL: Final = _Pool()
# A forked child inherits the idle tokens but not the threads: its jobs would wait forever.
os.register_at_fork(after_in_child=_POOL._forget_threads)
