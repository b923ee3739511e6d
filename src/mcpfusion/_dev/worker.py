"""The ``mcpfusion worker`` subcommand: a queue worker running the app's tasks (SAQ)."""

from __future__ import annotations

import argparse
import logging
import os
from typing import Any

import anyio

from mcpfusion._dev.target import UsageError, load_app

logger = logging.getLogger("mcpfusion")


def add_worker_command(commands: Any) -> None:
    """The ``worker`` subcommand."""
    worker = commands.add_parser(
        "worker",
        help="run the app's tasks from a queue on Redis, off the web workers (the queue extra)",
    )
    worker.add_argument("target", metavar="TARGET")
    worker.add_argument(
        "--redis-url", required=True, metavar="URL", help="the Redis the web workers use"
    )
    worker.add_argument("--queue", metavar="NAME", help="the queue to read (mcpfusion-tasks)")
    worker.add_argument(
        "--concurrency", type=int, default=10, metavar="N", help="tasks run at once (10)"
    )
    worker.add_argument(
        "--task-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="a task running longer is failed (300)",
    )
    worker.add_argument(
        "--heartbeat",
        type=int,
        default=10,
        metavar="SECONDS",
        help="a worker silent this long counts as dead and its tasks are taken back (10)",
    )
    worker.add_argument(
        "--retries",
        type=int,
        default=0,
        metavar="N",
        help="runs again of a task whose worker died (0: it fails); only for handlers "
        "that may safely run twice",
    )
    worker.set_defaults(handler=_worker)


def _worker(args: argparse.Namespace) -> int:
    try:
        # Imported here: arq and redis-py load only for the worker.
        from mcpfusion._serve.task_queue import DEFAULT_QUEUE, TaskWorker
    except ImportError as exc:
        needs = "mcpfusion worker needs the queue extra (mcpfusion[queue])"
        raise UsageError(f"{needs}: {exc}") from None
    app = load_app(args.target)
    app.freeze()
    try:
        runner = TaskWorker(
            app,
            args.redis_url,
            queue=args.queue or DEFAULT_QUEUE,
            concurrency=args.concurrency,
            task_timeout=args.task_timeout,
            retries=args.retries,
            heartbeat=args.heartbeat,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    logger.info("worker %d running the tasks of '%s' from %s", os.getpid(), app.name, runner.queue)
    anyio.run(runner.serve)
    return 0
