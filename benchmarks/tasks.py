"""What running a call as an MCP task costs, against the same call answered in its request.

Both are served by the same app over streamable HTTP (stateless, JSON bodies) through the
in-process ASGI transport of ``HttpTester``, with raw 2026-07-28 requests declaring the
tasks extension. The ``plain`` call is one ``tools/call``; the ``task`` call is the whole
life of a task: the ``tools/call`` that creates it, the handler run in the background, and
``tasks/get`` until it carries the result (polled without waiting, so the figure is the
work, not a poll interval). The handler is the same trivial one, so the difference is the
task machinery: the store, the runner, the extra request(s). Printed, with no target: a
task is for calls that take seconds, where this is noise.

Run: ``python -m benchmarks.tasks [--json] [--calls N] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import anyio

from mcpfusion import Fusion
from mcpfusion.testing import HttpTester

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}


def app() -> Fusion:
    """Two actions with the same handler: one answered in its request, one a task."""
    served = Fusion("tasks-bench")
    jobs = served.tool("jobs", description="Jobs.")

    @jobs.action(read_only=True)
    def plain(n: int) -> str:
        """Answers in the request."""
        return f"done {n}"

    @jobs.action(read_only=True, task="optional")
    def tasked(n: int) -> str:
        """Answers as a task."""
        return f"done {n}"

    return served


class Wire:
    """Raw 2026-07-28 requests over the tester's HTTP client."""

    def __init__(self, tester: HttpTester) -> None:
        self.tester = tester
        self.gets = 0

    async def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
        if method == "tools/call":
            headers["Mcp-Name"] = params["name"]
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
        response = await self.tester.http.post("/mcp", json=body, headers=headers)
        result: dict[str, Any] = response.json()["result"]
        return result

    async def plain(self, n: int) -> None:
        result = await self.send("tools/call", _call("plain", n))
        assert result["content"][0]["text"] == f"done {n}", result

    async def task(self, n: int) -> None:
        task = await self.send("tools/call", _call("tasked", n))
        while task["status"] != "completed":
            await anyio.sleep(0)  # let the handler run: no poll interval is measured
            task = await self.send("tasks/get", {"taskId": task["taskId"]})
            self.gets += 1
        assert task["result"]["content"][0]["text"] == f"done {n}", task


def _call(action: str, n: int) -> dict[str, Any]:
    return {"name": "jobs", "arguments": {"action": action, "n": n}}


async def measure(calls: int, rounds: int) -> dict[str, Any]:
    """Median milliseconds per call of each kind, over interleaved rounds of ``calls``."""
    samples: dict[str, list[float]] = {"plain": [], "task": []}
    async with HttpTester(app(), stateless=True, json_response=True) as tester:
        wire = Wire(tester)
        kinds = {"plain": wire.plain, "task": wire.task}
        for kind in kinds.values():  # warm-up: first-call costs are not the steady state
            await kind(0)
        wire.gets = 0
        for _ in range(rounds):
            for name, kind in kinds.items():
                start = time.perf_counter()
                for n in range(calls):
                    await kind(n)
                samples[name].append((time.perf_counter() - start) * 1e3 / calls)
        gets_per_task = wire.gets / (calls * rounds)
    plain, task = (statistics.median(samples[k]) for k in ("plain", "task"))
    return {
        "plain_ms": round(plain, 3),
        "task_ms": round(task, 3),
        "overhead_ms": round(task - plain, 3),
        "ratio": round(task / plain, 2),
        "tasks_get_per_task": round(gets_per_task, 2),
        "calls": calls,
        "rounds": rounds,
    }


def main() -> None:
    """Measures and prints the figures (one JSON line with ``--json``)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON line")
    parser.add_argument("--calls", type=int, default=200, help="calls per round and kind")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    args = parser.parse_args()
    figures = anyio.run(measure, args.calls, args.rounds)
    if args.json:
        print(json.dumps({"benchmark": "tasks", **figures}))
        return
    print(f"plain call (one tools/call):         {figures['plain_ms']:8.3f} ms")
    print(f"task (create, run, tasks/get result): {figures['task_ms']:8.3f} ms")
    print(
        f"overhead: {figures['overhead_ms']:.3f} ms per task ({figures['ratio']}x a plain "
        f"call; {figures['tasks_get_per_task']} tasks/get per task)"
    )


if __name__ == "__main__":
    main()
