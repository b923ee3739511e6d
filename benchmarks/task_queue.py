"""What running MCP tasks across workers costs: in the web worker with tasks in Redis, and on
queue workers (``--task-queue``, SAQ).

Both deployments serve ``tests/scale/task_app.py`` over stateless streamable HTTP with
``--redis-url`` on a local redis-server; the queued one hands calls to two ``mcpfusion
worker`` processes. The official client makes a trivial task and polls ``tasks/get``
every 2 ms until it has completed:

* latency: one task at a time, from the ``tools/call`` to the ``tasks/get`` that carries
  the result: p50 and p99, each deployment;
* throughput: tasks made back to back, then awaited: completed a second.

The target is that every task completed with the answer of the process that ran it; the
figures are for reading (a task is for calls of seconds, where these are noise; the load
average is printed).

Run: ``python -m benchmarks.task_queue [--json] [--tasks N]``; needs redis-server (``make
test`` installs it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from tests.e2e.test_tasks_e2e import Task
from tests.scale.services import REPO, cli, queue_workers, redis_server, replicas
from tests.scale.tasks_client import client, create, ended

TARGET = f"{REPO / 'tests' / 'scale' / 'task_app.py'}:app"
POLL = 0.002


async def deployment(port: int, count: int) -> tuple[dict[str, float], list[Task]]:
    """Latency and throughput of ``count`` tasks through the server on ``port``."""
    done: list[Task] = []
    latencies: list[float] = []
    async with client(port) as session:
        await session.list_tools()
        for _ in range(max(count // 4, 20)):
            started = time.perf_counter()
            done.append(await ended(session, await create(session, "whoami"), POLL))
            latencies.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        made = [await create(session, "whoami") for _ in range(count)]
        for task_id in made:
            done.append(await ended(session, task_id, POLL))
        elapsed = time.perf_counter() - started
    cuts = statistics.quantiles(latencies, n=100)
    figures = {"p50_ms": round(cuts[49], 1), "p99_ms": round(cuts[98], 1)}
    figures["tasks_per_s"] = round(count / elapsed, 1)
    return figures, done


async def measure(count: int) -> dict[str, Any]:
    """Every figure, with its own redis-server, servers and workers."""
    figures: dict[str, Any] = {}
    wrong = 0
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        with redis_server(folder / "redis") as redis:
            shared = ("--stateless", "--redis-url", redis.url)
            commands = [cli(TARGET, *shared), cli(TARGET, *shared, "--task-queue")]
            with (
                replicas(commands, folder / "servers") as (here, queued),
                queue_workers(redis, "mcpfusion-tasks", folder / "workers", 2) as workers,
            ):
                with anyio.fail_after(600):
                    figures["web_worker"], done = await deployment(here.port, count)
                    wrong += sum(f"pid={here.process.pid}" not in _text(t) for t in done)
                    figures["queue_workers"], done = await deployment(queued.port, count)
                    pids = [f"pid={worker.pid}" for worker in workers]
                    wrong += sum(not any(p in _text(t) for p in pids) for t in done)
    figures["wrong"] = wrong
    figures["load"] = os.getloadavg()
    return figures


def _text(task: Task) -> str:
    if task.status != "completed" or task.result is None:
        return ""
    return str(task.result["content"][0]["text"])


def main(argv: list[str] | None = None) -> int:
    """Prints the figures; exits 0 when every task completed with its runner's answer."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.task_queue", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--tasks", type=int, default=200, help="tasks per throughput (200)")
    args = parser.parse_args(argv)
    figures = anyio.run(measure, args.tasks)
    if args.json:
        print(json.dumps(figures))
    else:
        for name in ("web_worker", "queue_workers"):
            one = figures[name]
            print(
                f"{name}: p50 {one['p50_ms']} ms, p99 {one['p99_ms']} ms "
                f"(tools/call to result), {one['tasks_per_s']} tasks/s"
            )
        print(f"wrong: {figures['wrong']}; load average {figures['load']}")
    return 0 if figures["wrong"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
