"""The app's lifespan: run once per process around serving, its state shared by every call."""

from __future__ import annotations

import collections.abc
import contextlib
import gc
import logging
import os
import signal
import threading
import typing
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final

import anyio
from anyio.abc import TaskStatus

from mcpfusion._tools.context import NOT_STARTED

logger = logging.getLogger("mcpfusion")

LifespanFactory = Callable[[Any], AbstractAsyncContextManager[Any]]
"""Called with the app; an async context manager yielding the app's state."""

_YIELDING = (
    collections.abc.AsyncIterator,
    collections.abc.AsyncGenerator,
    collections.abc.AsyncIterable,
    contextlib.AbstractAsyncContextManager,
)


class Lifespan:
    """Runs an app's lifespan once, however many servers, testers or workers enter it.

    The first ``running()`` to enter starts it and the last to leave shuts it down; the
    ones between share its state. Shutdown is shielded from cancellation, so it completes
    when serving stops on a signal.
    """

    def __init__(self, factory: LifespanFactory | None, owner: Any) -> None:
        self.factory = factory
        self.owner = owner
        self.state: Any = NOT_STARTED if factory is not None else None
        self._entered = 0
        self._lock: anyio.Lock | None = None
        self._stack: contextlib.AsyncExitStack | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Any]:
        """Starts the lifespan unless it runs already; yields the state."""
        if self.factory is None:
            yield None
            return
        lock = self._lock = self._lock or anyio.Lock()
        async with lock:
            if self._entered == 0:
                stack = contextlib.AsyncExitStack()
                # Entered with the stack, so a startup that fails half-way has nothing to
                # shut down but what it already started (the context manager's own code).
                self.state = await stack.enter_async_context(self.factory(self.owner))
                self._stack = stack
                logger.debug("lifespan of %r started", self.owner)
            self._entered += 1
        try:
            yield self.state
        finally:
            with anyio.CancelScope(shield=True):
                async with lock:
                    self._entered -= 1
                    if self._entered == 0 and self._stack is not None:
                        stack, self._stack = self._stack, None
                        self.state = NOT_STARTED
                        await stack.aclose()
                        logger.debug("lifespan of %r shut down", self.owner)


def state_type(factory: LifespanFactory | None) -> type | None:
    """The class of the state a lifespan yields, when its return annotation says so."""
    if factory is None:
        return None
    try:
        returned = typing.get_type_hints(factory).get("return")
    except Exception:  # an unresolvable hint only means no injection by type
        return None
    if typing.get_origin(returned) not in _YIELDING:
        return None
    args = typing.get_args(returned)
    product = args[0] if args else None
    if not isinstance(product, type) or product.__module__ in ("builtins", "typing"):
        return None  # `dict` or `str` would capture ordinary parameters of that type
    return product


GRACE_SECONDS: Final = 3.0
"""How long serving may take to stop after a signal before the process exits without it."""


async def until_signalled(
    serve: Callable[[], Awaitable[None]],
    on_stuck: Callable[[], Awaitable[Any]],
    grace: float = GRACE_SECONDS,
) -> None:
    """Runs ``serve`` until it returns or the process gets SIGTERM or SIGINT.

    A signal cancels serving, so whatever encloses it (the app's lifespan) then exits
    normally instead of the process dying with its shutdown never run. A transport can
    sit in a read no cancellation interrupts (a thread blocked on stdin): if serving has
    not stopped ``grace`` seconds after the signal, ``on_stuck`` runs (the lifespan's
    shutdown) and the process exits at once. Signals are only received on the main
    thread; elsewhere ``serve`` simply runs.
    """
    if threading.current_thread() is not threading.main_thread():
        await serve()
        return
    serving = anyio.CancelScope()
    finished = anyio.Event()
    async with anyio.create_task_group() as group:

        async def run() -> None:
            try:
                with serving:
                    await serve()
            finally:
                finished.set()
                group.cancel_scope.cancel()

        async def watch(*, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                task_status.started()
                async for received in signals:
                    logger.info("received %s: shutting down", signal.Signals(received).name)
                    serving.cancel()
                    with anyio.move_on_after(grace):
                        await finished.wait()
                    if not finished.is_set():
                        logger.warning("serving did not stop within %g s: exiting", grace)
                        await on_stuck()
                        logging.shutdown()
                        os._exit(0)
                    return

        await group.start(watch)  # serving starts once a signal can no longer kill it
        group.start_soon(run)


def settle() -> None:
    """Freezes what is alive once serving starts out of the cyclic collector.

    Modules, the SDK's models and validators, the app and its state live as long as the
    process; the collector's full collections walked them all again and again, up to
    260 ms each under load over HTTP (p99 125 ms at 10 clients, ``benchmarks/serving.py``)
    and 1.6-3.5 ms p99 over stdio (``benchmarks/stdio.py``). Called by each transport
    once, when it is ready to serve.
    """
    gc.collect()
    gc.freeze()
