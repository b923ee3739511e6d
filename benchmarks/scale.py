"""Scale-out figures for the capacity model in docs/deployment.md.

* throughput: the billing example (stateless, API key, audit log), ``customers.get_customer``
  from 16 keep-alive connections for a few seconds, with 1, 2 and 4 workers: calls/s, p50,
  p99 (the clients share the machine's cores with the server);
* memory: RSS of one worker, and the growth per open stateful session and per call in
  flight;
* Redis: events a second one bus publishes, and deliveries a second into 4 buses.

The target is that every call was answered correctly; the figures are for reading (they
depend on the machine and on what else runs on it: the load average is printed).

Run: ``python -m benchmarks.scale [--json] [--seconds S]``; needs redis-server (``make
test`` installs it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import toon_format
from mcp.server.subscriptions import ToolsListChanged

from mcpfusion.redis import RedisSubscriptionBus
from tests.scale import load
from tests.scale.services import billing, cli, redis_server, replicas

CONNECTIONS = 16
WORKERS = (1, 2, 4)
SESSIONS = 200
IN_FLIGHT = 200
EVENTS = 5000
BUSES = 4


def rss_kib(pid: int) -> int:
    """Resident memory of a process, in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise LookupError(pid)


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (a replica's workers)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


async def throughput(url: str, seconds: float) -> dict[str, Any]:
    """Calls/s and latency of CONNECTIONS clients calling get_customer flat out."""
    latencies: list[float] = []
    wrong = 0
    expected = {"id": "CUS-0001", "name": None}

    async def one_client() -> None:
        nonlocal wrong
        async with load.http_client() as http:
            deadline = time.perf_counter() + seconds
            request_id = 0
            while time.perf_counter() < deadline:
                request_id += 1
                started = time.perf_counter()
                arguments = {"action": "get_customer", "customer_id": "CUS-0001"}
                result = await load.call_tool(http, url, request_id, "customers", arguments)
                latencies.append(time.perf_counter() - started)
                if result.get("isError"):
                    wrong += 1
                    continue
                # The billing app's data block is TOON, its default (SPEC §10).
                data = toon_format.decode(result["content"][0]["text"])
                if not isinstance(data, dict) or data.get("id") != expected["id"]:
                    wrong += 1

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(CONNECTIONS):
            group.start_soon(one_client)
    elapsed = time.perf_counter() - started
    return {
        "calls_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(load.percentile(latencies, 0.5) * 1000, 1),
        "p99_ms": round(load.percentile(latencies, 0.99) * 1000, 1),
        "calls": len(latencies),
        "wrong": wrong,
    }


async def session_memory(url: str, pid: int) -> float:
    """KiB of RSS per open stateful session (initialized, idle)."""
    version = "2025-11-25"
    accept = {"Accept": "application/json, text/event-stream"}
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "b", "version": "1"},
        },
    }
    async with httpx2.AsyncClient(timeout=30) as http:
        await http.post(url, json=body, headers=accept)  # warm-up
        before = rss_kib(pid)
        for _ in range(SESSIONS):
            response = await http.post(url, json=body, headers=accept)
            headers = {
                **accept,
                "Mcp-Session-Id": response.headers["mcp-session-id"],
                "MCP-Protocol-Version": version,
            }
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(url, json=note, headers=headers)
        return (rss_kib(pid) - before) / SESSIONS


async def in_flight_memory(url: str, pid: int) -> float:
    """KiB of RSS per call in flight (each waits 3 s in its handler)."""
    limits = httpx2.Limits(max_connections=IN_FLIGHT + 10)
    async with httpx2.AsyncClient(
        timeout=30, limits=limits, headers=load.http_client().headers
    ) as http:
        await load.call_tool(http, url, 1, "work_steps", {"count": 1, "pause": 0.01})
        before = rss_kib(pid)
        peak = before

        async def one(n: int) -> None:
            await load.call_tool(http, url, n, "work_steps", {"count": 1, "pause": 3.0})

        async with anyio.create_task_group() as group:
            for n in range(IN_FLIGHT):
                group.start_soon(one, n + 2)
            await anyio.sleep(2.0)
            peak = rss_kib(pid)
        return (peak - before) / IN_FLIGHT


async def redis_fan_out(url: str) -> dict[str, float]:
    """Events/s one bus publishes, and deliveries/s into BUSES buses."""
    buses = [RedisSubscriptionBus(url) for _ in range(BUSES)]
    received = 0
    done = anyio.Event()

    def count(_: object) -> None:
        nonlocal received
        received += 1
        if received == EVENTS * BUSES:
            done.set()

    async with buses[0], buses[1], buses[2], buses[3]:
        for bus in buses:
            bus.subscribe(count)
            with anyio.fail_after(10):
                await bus.subscribed.wait()
        started = time.perf_counter()
        for _ in range(EVENTS):
            await buses[0].publish(ToolsListChanged())
        published = time.perf_counter() - started
        with anyio.move_on_after(30):
            await done.wait()
        delivered = time.perf_counter() - started
    return {
        "published_per_s": round(EVENTS / published),
        "deliveries_per_s": round(received / delivered),
        "delivered": received,
    }


async def measure(seconds: float) -> dict[str, Any]:
    figures: dict[str, Any] = {"load_average": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = folder / "billing.db"
        load.snapshot(db)  # seeded once, before the servers start
        for workers in WORKERS:
            command = billing(db, "--stateless", workers=workers)
            with replicas([command], folder / f"w{workers}") as (server,):
                url = f"http://127.0.0.1:{server.port}/mcp"
                await throughput(url, 1.0)  # warm-up
                figures[f"workers_{workers}"] = await throughput(url, seconds)
                if workers == 1:
                    worker_pids = children(server.process.pid) or [server.process.pid]
                    figures["worker_rss_mib"] = round(rss_kib(worker_pids[0]) / 1024, 1)
        with replicas([cli("tests.scale.apps:slow")], folder / "sessions") as (server,):
            url = f"http://127.0.0.1:{server.port}/mcp"
            figures["kib_per_session"] = round(await session_memory(url, server.process.pid), 1)
        with replicas([cli("tests.scale.apps:slow", "--stateless")], folder / "calls") as (server,):
            url = f"http://127.0.0.1:{server.port}/mcp"
            pid = server.process.pid
            figures["kib_per_call_in_flight"] = round(await in_flight_memory(url, pid), 1)
        with redis_server(folder / "redis") as redis:
            figures["redis"] = await redis_fan_out(redis.url)
    figures["load_average_after"] = os.getloadavg()
    return figures


def main(argv: list[str] | None = None) -> int:
    """Prints the figures (``--json`` for one JSON line) and PASS/FAIL."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--seconds", type=float, default=6.0, help="seconds per throughput run")
    args = parser.parse_args(argv)
    figures = anyio.run(measure, args.seconds)
    wrong = sum(figures[f"workers_{w}"]["wrong"] for w in WORKERS)
    passed = wrong == 0 and figures["redis"]["delivered"] == EVENTS * BUSES
    figures["result"] = "PASS" if passed else "FAIL"
    if args.json:
        print(json.dumps(figures))
        return 0 if passed else 1
    load_average = ", ".join(f"{x:.2f}" for x in figures["load_average"])
    print(f"scale-out, {os.cpu_count()} cores, load average before: {load_average}")
    print(f"billing customers.get_customer, {CONNECTIONS} keep-alive connections, stateless:")
    for workers in WORKERS:
        f = figures[f"workers_{workers}"]
        print(
            f"  {workers} worker(s): {f['calls_per_s']:>7.1f} calls/s  p50 {f['p50_ms']:.1f} ms"
            f"  p99 {f['p99_ms']:.1f} ms  ({f['calls']} calls, {f['wrong']} wrong)"
        )
    print(f"  RSS of one worker: {figures['worker_rss_mib']} MiB")
    print(f"  per open stateful session: {figures['kib_per_session']} KiB")
    print(f"  per call in flight: {figures['kib_per_call_in_flight']} KiB")
    redis = figures["redis"]
    print(
        f"Redis: {redis['published_per_s']} events/s published by one bus, "
        f"{redis['deliveries_per_s']} deliveries/s into {BUSES} buses"
    )
    after = ", ".join(f"{x:.2f}" for x in figures["load_average_after"])
    print(f"load average after: {after}")
    print(figures["result"])
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
