"""A rate limit of 10 calls a second per identity holds across 3 replicas sharing Redis."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from mcpfusion.redis import RedisRateLimitStore
from tests.scale import load
from tests.scale.apps import LIMIT
from tests.scale.services import Redis, cli, nginx, replicas

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]

CLIENTS = 8
WARM_UP = 2.0
"""Seconds before the window: the burst is spent and the bucket stays empty."""
WINDOW = 4.0


async def test_ten_calls_a_second_hold_across_three_replicas(folder: Path, redis: Redis) -> None:
    """8 clients calling flat out through nginx get 10 calls a second between them (±10 %).

    The calls that pass in a 4 s window after the burst is spent are counted.
    """
    command = cli("tests.scale.apps:limited", "--stateless", "--redis-url", redis.url)
    passed: list[float] = []
    limited = 0
    with (
        replicas([command] * 3, folder) as started,
        nginx(folder / "nginx", "stateless.conf", [r.port for r in started]) as port,
    ):
        url = f"http://127.0.0.1:{port}/mcp"
        start = time.perf_counter()

        async def hammer() -> None:
            nonlocal limited
            async with load.http_client() as http:
                request_id = 0
                deadline = start + WARM_UP + WINDOW
                while time.perf_counter() < deadline:
                    request_id += 1
                    with anyio.fail_after(10):
                        result = await load.call_tool(http, url, request_id, "ping_once", {})
                    if result.get("isError"):
                        assert "RATE_LIMITED" in result["content"][0]["text"]
                        limited += 1
                    else:
                        passed.append(time.perf_counter())

        async with anyio.create_task_group() as group:
            for _ in range(CLIENTS):
                group.start_soon(hammer)
    window = [t for t in passed if start + WARM_UP <= t < start + WARM_UP + WINDOW]
    rate = len(window) / WINDOW
    print(
        f"\nrate limit {LIMIT:g}/s across 3 replicas: {rate:.2f} calls/s passed, {limited} refused"
    )
    assert limited > len(passed)  # the clients asked for far more than the limit
    assert LIMIT * 0.9 <= rate <= LIMIT * 1.1


async def test_a_bucket_of_one_in_redis_lets_each_first_call_pass(redis: Redis) -> None:
    """With burst 1, every new key's first call passes and its second waits, also where the
    bucket's time plus its interval crosses a power of two (a rate of one call in 30
    years): the script once rounded that full bucket into a refusal."""
    async with RedisRateLimitStore(redis.url, prefix=f"first-{time.time_ns()}") as store:
        with anyio.fail_after(20):
            for number in range(20):
                for rate in (0.001, 1e-9):
                    assert await store.take(f"caller-{number}-{rate}", rate, 1) == 0.0
                    assert await store.take(f"caller-{number}-{rate}", rate, 1) > 0
