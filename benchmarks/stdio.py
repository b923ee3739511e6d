"""``tools/call`` over a real stdio subprocess: mcpfusion's transport against the SDK's.

The billing example's ``get_invoice`` (a presented invoice with its lines, read from
SQLite) is served by three subprocesses over the same seeded database, started by
``python -m tests.e2e.stdio_server`` (until ``mcpfusion.server`` serves stdio on the new
transport, and ``mcpfusion run`` with it):

* ``sdk``: the baseline, ``build_server(app)`` on the SDK's own ``stdio_server``;
* ``transport``: the same SDK server on mcpfusion's stdio transport without its hot path:
  informational, it shows what the pipes alone give;
* ``mcpfusion``: the transport with its ``tools/call`` hot path.

A minimal line-based JSON-RPC client (initialize, the initialized notification, then
calls) drives each with 1 request in flight (the latency of every call is timed) and with
10 in flight (throughput). Rounds are interleaved across the servers, so a busy moment of
the machine lands on every figure alike. Targets (issue 12): throughput at 10 in flight
>= 6x the baseline, i.e. seconds per call <= 1/6 of the baseline's; sequential p50 <= 0.4x
the baseline's.

``modern_vs_legacy_p50`` is what the protocol era costs where users meet the server: the
sequential p50 of ``get_invoice`` through the official Python client in its default mode
(2026-07-28: no handshake, an envelope in every request) divided by the same client with
``mode="legacy"`` (a 2025-11-25 session), both on the ``mcpfusion`` server, in the same
rounds. Target (issue 25): <= 1.2, the 2026 calls taking the hot path too.

``in_process`` is the floor no transport can beat, measured in the same rounds: the same
app's ``call_tool`` awaited in this process, inside its lifespan and as the caller stdio
serves (the app's local identity), with no JSON-RPC at all. ``overhead_p50_us`` is what
each server adds to it. ``in_process_vs_sdk`` is the best any server could reach against
the baseline: a server whose transport cost nothing would score these ratios.

Run: ``python -m benchmarks.stdio [--json] [--calls N] [--rounds R]`` from the repository.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pydantic_core
from mcp import Client as OfficialClient
from mcp import StdioServerParameters

from benchmarks.timing import all_passed, report, target
from examples.billing.__main__ import ENV_DB
from examples.billing.db import BillingDB
from examples.billing.server import create_app
from mcpfusion import Fusion

SERVERS = ("sdk", "transport", "mcpfusion")
IN_FLIGHT = 10
MAX_SECONDS_PER_CALL_VS_SDK = round(1 / 6, 3)
MAX_P50_VS_SDK = 0.4
MAX_MODERN_VS_LEGACY_P50 = 1.2
MODES = ("default", "legacy")
ARGUMENTS = {"action": "get_invoice", "invoice_id": "INV-00042"}
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "benchmarks.stdio", "version": "0"},
}


REPO = Path(__file__).resolve().parent.parent
TARGET = "examples.billing.__main__:app"
"""The billing app's factory, which opens the database named by its environment variable."""


class Client:
    """A line-based JSON-RPC client of one server subprocess: the least a client can do."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def start(cls, name: str, db: str) -> Client:
        """Spawns the server ``name`` over the database ``db`` and initializes a session."""
        command = ["-m", "tests.e2e.stdio_server", TARGET, "--with", name]
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            cwd=REPO,
            env={**os.environ, ENV_DB: db},
            limit=64 * 1024 * 1024,
        )
        client = cls(process)
        await client.request("initialize", INITIALIZE)
        client.notify("notifications/initialized")
        return client

    async def _read(self) -> None:
        while line := await self._stdout.readline():
            message = pydantic_core.from_json(line)
            future = self._waiting.pop(message.get("id"), None)
            if future is not None:
                future.set_result(message)

    def notify(self, method: str) -> None:
        """Sends a notification."""
        self._stdin.write(pydantic_core.to_json({"jsonrpc": "2.0", "method": method}) + b"\n")

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Sends a request and waits for its response (an error response raises)."""
        request_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self._stdin.write(pydantic_core.to_json(message) + b"\n")
        answer: dict[str, Any] = await future
        if "result" not in answer:
            raise RuntimeError(f"{method} failed: {answer.get('error')}")
        return answer

    async def call(self) -> None:
        """One ``get_invoice`` call, checked."""
        answer = await self.request("tools/call", {"name": "billing", "arguments": ARGUMENTS})
        if answer["result"].get("isError"):
            raise RuntimeError(f"get_invoice failed: {answer['result']}")

    async def close(self) -> None:
        """Closes stdin and waits for the server to exit."""
        self._stdin.close()
        await asyncio.wait_for(self.process.wait(), 10)
        self._reader.cancel()


async def sequential_us(client: Client, calls: int) -> list[float]:
    """The latency of ``calls`` calls made one after the other, in microseconds."""
    samples = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        await client.call()
        samples.append((time.perf_counter_ns() - start) / 1000)
    return samples


async def calls_per_second(client: Client, calls: int, in_flight: int) -> float:
    """Throughput of ``calls`` calls with ``in_flight`` requests outstanding at all times."""
    remaining = calls

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await client.call()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return calls / (time.perf_counter() - start)


def official_client(mode: str, db: str) -> OfficialClient:
    """The official client of a new ``mcpfusion`` server subprocess, in ``mode``."""
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tests.e2e.stdio_server", TARGET, "--with", "mcpfusion"],
        env={**os.environ, ENV_DB: db},
        cwd=REPO,
    )
    return OfficialClient(server) if mode == "default" else OfficialClient(server, mode="legacy")


async def official_us(client: OfficialClient, calls: int) -> list[float]:
    """The latency of ``calls`` ``get_invoice`` calls through the official client (µs)."""
    samples = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        result = await client.call_tool("billing", ARGUMENTS)
        samples.append((time.perf_counter_ns() - start) / 1000)
        if result.is_error:
            raise RuntimeError(f"get_invoice failed: {result.content}")
    return samples


async def in_process_call(app: Fusion) -> None:
    """One ``get_invoice`` call in this process, as stdio serves it, checked.

    Without the identity the app refuses the call (FORBIDDEN) in microseconds: a floor
    of the wrong work.
    """
    response = await app.call_tool("billing", ARGUMENTS, identity=app.local_identity)
    if response.is_error:
        raise RuntimeError(f"get_invoice failed in process: {response.blocks}")


async def in_process_us(app: Fusion, calls: int) -> list[float]:
    """The latency of ``calls`` in-process ``call_tool`` calls one after the other (µs)."""
    samples = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        await in_process_call(app)
        samples.append((time.perf_counter_ns() - start) / 1000)
    return samples


async def in_process_per_second(app: Fusion, calls: int, in_flight: int) -> float:
    """In-process ``call_tool`` throughput with ``in_flight`` calls running at all times."""
    remaining = calls

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await in_process_call(app)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return calls / (time.perf_counter() - start)


def loadavg() -> str:
    """The first three fields of /proc/loadavg, or "n/a" where there is none."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


async def measure(calls: int, rounds: int) -> dict[str, Any]:
    """Every figure of every server, rounds interleaved; targets against the SDK baseline."""
    async with contextlib.AsyncExitStack() as lifespan:
        folder = lifespan.enter_context(tempfile.TemporaryDirectory())
        db = str(Path(folder) / "billing.db")
        BillingDB.open(db)  # seeded once, before any server starts
        clients = {name: await Client.start(name, db) for name in SERVERS}
        official = {
            mode: await lifespan.enter_async_context(official_client(mode, db)) for mode in MODES
        }
        official_latencies: dict[str, list[float]] = {mode: [] for mode in MODES}
        app = create_app(db)
        await lifespan.enter_async_context(app.running())  # the servers run theirs too
        load_before = loadavg()
        names = (*SERVERS, "in_process")
        latencies: dict[str, list[float]] = {name: [] for name in names}
        sequential: dict[str, list[float]] = {name: [] for name in names}
        concurrent: dict[str, list[float]] = {name: [] for name in names}
        try:
            for client in clients.values():  # warm-up: imports, caches, the first calls
                await calls_per_second(client, 500, IN_FLIGHT)
            await in_process_per_second(app, 500, IN_FLIGHT)
            for official_one in official.values():
                await official_us(official_one, 200)
            for _ in range(rounds):
                for mode, official_one in official.items():
                    official_latencies[mode] += await official_us(official_one, calls // 4)
                for name, client in clients.items():
                    samples = await sequential_us(client, calls)
                    latencies[name] += samples
                    sequential[name].append(1e6 * len(samples) / sum(samples))
                samples = await in_process_us(app, calls)
                latencies["in_process"] += samples
                sequential["in_process"].append(1e6 * len(samples) / sum(samples))
                for name, client in clients.items():
                    concurrent[name].append(await calls_per_second(client, 5 * calls, IN_FLIGHT))
                concurrent["in_process"].append(
                    await in_process_per_second(app, 5 * calls, IN_FLIGHT)
                )
        finally:
            for client in clients.values():
                await client.close()
        load_after = loadavg()
    p50 = {name: statistics.median(values) for name, values in latencies.items()}
    throughput_1 = {name: statistics.median(values) for name, values in sequential.items()}
    throughput_10 = {name: statistics.median(values) for name, values in concurrent.items()}
    official_p50 = {mode: statistics.median(values) for mode, values in official_latencies.items()}
    return {
        "calls_per_round": {"sequential": calls, "in_flight_10": 5 * calls},
        "rounds": rounds,
        "loadavg": {"before": load_before, "after": load_after},
        "p50_us": {name: round(value, 1) for name, value in p50.items()},
        "p99_us": {
            name: round(statistics.quantiles(values, n=100)[98], 1)
            for name, values in latencies.items()
        },
        "calls_per_s_1_in_flight": {name: round(v) for name, v in throughput_1.items()},
        "calls_per_s_10_in_flight": {name: round(v) for name, v in throughput_10.items()},
        "throughput_10_vs_sdk": {
            name: round(throughput_10[name] / throughput_10["sdk"], 2) for name in names
        },
        "official_client_p50_us": {mode: round(v, 1) for mode, v in official_p50.items()},
        "overhead_p50_us": {name: round(p50[name] - p50["in_process"], 1) for name in SERVERS},
        "in_process_vs_sdk": {
            "p50": round(p50["in_process"] / p50["sdk"], 3),
            "seconds_per_call_10_in_flight": round(
                throughput_10["sdk"] / throughput_10["in_process"], 3
            ),
        },
        "targets": {
            "seconds_per_call_10_in_flight_vs_sdk": target(
                throughput_10["sdk"] / throughput_10["mcpfusion"], MAX_SECONDS_PER_CALL_VS_SDK
            ),
            "p50_vs_sdk": target(p50["mcpfusion"] / p50["sdk"], MAX_P50_VS_SDK),
            "modern_vs_legacy_p50": target(
                official_p50["default"] / official_p50["legacy"], MAX_MODERN_VS_LEGACY_P50
            ),
        },
    }


def main(argv: list[str] | None = None) -> int:
    """Prints the figures and PASS/FAIL (``--json``: then one JSON line); 1 if a target fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="end with one JSON line of figures")
    parser.add_argument("--calls", type=int, default=2000, help="sequential calls per round")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    args = parser.parse_args(argv)
    figures = asyncio.run(measure(args.calls, args.rounds))
    report(figures, args.json)
    return 0 if all_passed(figures) else 1


if __name__ == "__main__":
    sys.exit(main())
