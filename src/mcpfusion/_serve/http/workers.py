"""Several server processes on one socket: a small supervisor over uvicorn workers.

The parent binds the socket, builds the app once (a definition mistake stops it before any
worker starts), announces the endpoint and starts ``workers`` processes; each imports the
app from its factory, runs its lifespan once and serves the shared socket. SIGTERM or
SIGINT reaches every worker, which refuses new connections and gives calls in flight
``shutdown_timeout`` seconds; a worker that dies on its own is replaced. Without
``request_state_keys``, the parent makes one key for its workers, so that any of them takes
the next round of a 2026-07-28 call another one started.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import multiprocessing
import os
import secrets
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from typing import Any, Final

from mcpfusion._serve.http.app import GracefulServer, announce, uvicorn_config
from mcpfusion._serve.options import HttpOptions, http_options
from mcpfusion._serve.sdk import ServableApp

logger = logging.getLogger("mcpfusion")

AppFactory = Callable[[], ServableApp] | str
"""``"module:attr"`` (an app, or a function returning one) or a picklable function."""

LOG_FORMAT: Final = "%(name)s: %(message)s"
"""The CLI's log format, set up in each worker unless the worker's logging is."""

STARTUP_FAILURE: Final = 3
"""A worker's exit status when its app cannot be built or started."""

_KILL_MARGIN: Final = 5.0
"""Seconds past the grace period before a worker that has not exited is killed."""


def load_factory(factory: AppFactory) -> ServableApp:
    """The app ``factory`` names or makes."""
    if callable(factory):
        return factory()
    where, sep, attr = factory.partition(":")
    if not sep or not where or not attr:
        raise ValueError(f"an app factory is 'module:attr'; got {factory!r}")
    obj: Any = importlib.import_module(where)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if inspect.isfunction(obj):
        obj = obj()
    return obj  # type: ignore[no-any-return]


def _worker(factory: AppFactory, options: HttpOptions, sock: socket.socket) -> None:
    """One worker process: builds the app and serves ``sock`` until SIGTERM or SIGINT."""
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format=LOG_FORMAT)
    try:
        app = load_factory(factory)
        freeze = getattr(app, "freeze", None)
        if freeze is not None:
            freeze()
        config = uvicorn_config(app, options)
    except Exception:
        logger.exception("worker %d cannot build the app", os.getpid())
        sys.exit(STARTUP_FAILURE)
    server = GracefulServer(config)
    server.run(sockets=[sock])
    if not server.started:
        sys.exit(STARTUP_FAILURE)


def run_workers(factory: AppFactory, options: HttpOptions | None = None, **changes: Any) -> None:
    """Serves the app over streamable HTTP in ``options.workers`` processes, blocking until
    SIGTERM or SIGINT.

    Each worker builds the app from ``factory``, so the factory must be importable in a
    fresh process: ``"module:attr"`` (an app or a function returning one) or a module-level
    function (not one defined in ``__main__``). Options must pickle (the Redis stores and
    bus of ``mcpfusion.redis`` do). Stateful servers should run one worker: a session lives
    in the process that opened it, and a load balancer spreads its requests otherwise.

    Without ``options.request_state_keys``, a key is made here and reaches each worker
    (and each replacement) with its options, through the pipe that starts it: the workers
    read each other's ``requestState``, and it dies with this process. Replicas on other
    machines need keys of their own choosing.

    Raises:
        ValueError: on a factory that names no app.
    """
    options = http_options(options, changes)
    if not options.request_state_keys:
        options = http_options(options, {"request_state_keys": [secrets.token_hex(32)]})
    app = load_factory(factory)  # fails here, once, rather than in every worker
    freeze = getattr(app, "freeze", None)
    if freeze is not None:
        freeze()
    sock = uvicorn_config(app, options).bind_socket()
    sock.listen()
    announce(app, options, sock)
    Supervisor(factory, options, sock).run()


class Supervisor:
    """Starts the workers, forwards stop signals, replaces a worker that dies."""

    def __init__(self, factory: AppFactory, options: HttpOptions, sock: socket.socket) -> None:
        self.factory = factory
        self.options = options
        self.sock = sock
        self.context = multiprocessing.get_context("spawn")
        self.workers: list[BaseProcess] = []
        self.stopping = threading.Event()

    def _start(self) -> BaseProcess:
        process = self.context.Process(
            target=_worker, args=(self.factory, self.options, self.sock), daemon=False
        )
        process.start()
        return process

    def run(self) -> None:
        previous = {
            sig: signal.signal(sig, lambda *_: self.stopping.set())
            for sig in (signal.SIGTERM, signal.SIGINT)
        }
        try:
            self.workers = [self._start() for _ in range(self.options.workers)]
            logger.info("%d workers started (pids %s)", len(self.workers), _pids(self.workers))
            while not self.stopping.wait(0.2):
                self._replace_dead()
        finally:
            self._stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _replace_dead(self) -> None:
        for index, process in enumerate(self.workers):
            if process.is_alive():
                continue
            if process.exitcode == STARTUP_FAILURE:
                logger.error("worker %s could not start: stopping", process.pid)
                self.stopping.set()
                return
            logger.warning("worker %s exited with %s: replacing it", process.pid, process.exitcode)
            self.workers[index] = self._start()

    def _stop(self) -> None:
        # The parent's copy of the socket closes first: once the workers close theirs, a
        # new connection is refused rather than left waiting in the backlog.
        self.sock.close()
        for process in self.workers:
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + self.options.shutdown_timeout + _KILL_MARGIN
        for process in self.workers:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                logger.warning("worker %s did not stop in time: killing it", process.pid)
                process.kill()
                process.join()


def _pids(processes: list[BaseProcess]) -> str:
    return ", ".join(str(p.pid) for p in processes)
