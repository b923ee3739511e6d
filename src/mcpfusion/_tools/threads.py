"""Sync handlers in worker threads, counted while they run, not while their callers wait."""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import weakref
from collections.abc import Callable
from typing import Final, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from anyio.lowlevel import RunVar

from mcpfusion._tools.pool import POOL, Pace

T = TypeVar("T")

HANDLER_THREADS: Final = 40
"""At most this many sync handlers run at once (anyio's default worker count).

A thread cannot be interrupted. When a call is cancelled (its client left, a timeout) the
caller stops waiting at once, but the handler's thread runs on to the end of the handler;
its slot is held until then, so clients that hang up can never make more than this many
handler threads run at once.
"""

_RUNNING: RunVar[anyio.CapacityLimiter] = RunVar("mcpfusion_handler_threads")
_UNBOUNDED: RunVar[anyio.CapacityLimiter] = RunVar("mcpfusion_unbounded")

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


_last_loop: tuple[weakref.ref[asyncio.AbstractEventLoop], anyio.CapacityLimiter] | None = None
"""The last asyncio loop's limiter: a ``RunVar`` lookup costs 1.2 µs a sync call."""


def _running_limiter(loop: asyncio.AbstractEventLoop | None) -> anyio.CapacityLimiter:
    """The running loop's slots (one limiter per event loop, as ``_RUNNING`` keeps them)."""
    global _last_loop
    last = _last_loop
    if last is not None and loop is not None and last[0]() is loop:
        return last[1]
    limiter = _limiter(_RUNNING, HANDLER_THREADS)
    if loop is not None:
        _last_loop = (weakref.ref(loop), limiter)
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


async def run_in_thread(
    fn: Callable[[], T], on_cancel: Callable[[], None], pace: Pace | None = None
) -> T | None:
    """Runs ``fn`` in a worker thread, waiting for a free slot first.

    Args:
        fn: the work; its exceptions (any ``BaseException``) propagate to the caller.
        on_cancel: called on the event loop when the caller is cancelled, so the work
            can see it (``ctx.cancelled``) and stop early.
        pace: what the caller's previous runs showed (one per action): whether the loop
            waits awake for a quick run (see ``pool``); ``None``: a fresh one.

    Returns:
        What ``fn`` returned (``None`` only if it never started).
    """
    loop = _asyncio_loop()
    limiter = _running_limiter(loop)
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
            result = await POOL.call(loop, work, pace or Pace())
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
