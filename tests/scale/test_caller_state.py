"""RedisCallerStore on a real redis-server: values per caller, TTLs, and failing closed."""

from __future__ import annotations

import time

import anyio
import pytest

from mcpfusion import CallerState
from mcpfusion._serve.caller_redis import CallerStateUnavailable
from mcpfusion.redis import RedisCallerStore, shared_state
from tests.scale.services import Redis, free_port

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]


async def test_caller_state_in_redis_is_per_caller_and_survives_a_new_connection(
    redis: Redis,
) -> None:
    """A value written through one store is read through another; callers stay apart."""
    prefix = f"cs-{time.time_ns()}"
    with anyio.fail_after(20):
        async with RedisCallerStore(redis.url, prefix=prefix) as store:
            await CallerState(store, "alice").set("cart", ["pen"])
        async with RedisCallerStore(redis.url, prefix=prefix) as store:
            assert await CallerState(store, "alice").get("cart") == ["pen"]
            assert await CallerState(store, "bob").get("cart") is None
            await CallerState(store, "alice").delete("cart")
            assert await CallerState(store, "alice").get("cart") is None


async def test_caller_state_in_redis_expires_and_a_short_ttl_never_cuts_a_long_one(
    redis: Redis,
) -> None:
    """The caller's hash lives as long as its longest TTL asked; then it is gone."""
    prefix = f"ttl-{time.time_ns()}"
    with anyio.fail_after(20):
        async with RedisCallerStore(redis.url, prefix=prefix) as store:
            state = CallerState(store, "alice")
            await state.set("long", 1, ttl=3600)
            await state.set("short", 2, ttl=0.05)
            client = store._link.client
            assert await client.pttl(f"{prefix}:cs:alice") > 3_000_000
            await state.delete("long")
            await state.delete("short")
            await state.set("brief", 3, ttl=0.05)
            while await client.exists(f"{prefix}:cs:alice"):
                await anyio.sleep(0.02)
            assert await state.get("brief") is None


async def test_caller_state_fails_closed_while_redis_is_unreachable() -> None:
    """Nothing listens on the port: reading caller state raises instead of answering None."""
    with anyio.fail_after(20):
        async with RedisCallerStore(f"redis://127.0.0.1:{free_port()}/0") as store:
            with pytest.raises(CallerStateUnavailable, match="Redis"):
                await CallerState(store, "alice").get("reviewed")


def test_caller_state_is_part_of_the_shared_state() -> None:
    """--redis-url's options include the caller store, stateless or not."""
    assert isinstance(shared_state("redis://127.0.0.1:1/0")["caller_store"], RedisCallerStore)
    stateless = shared_state("redis://127.0.0.1:1/0", stateless=True)
    assert isinstance(stateless["caller_store"], RedisCallerStore)
