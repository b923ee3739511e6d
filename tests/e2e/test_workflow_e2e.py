"""The workflow gate and caller state over stdio and stateless HTTP (two workers, Redis)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcpfusion._tools.caller_state import CONVERSATION_META
from tests.e2e.servers import REPO, http_server
from tests.scale.services import redis_server

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

TARGET = "tests/e2e/workflow_app.py:app"
ALICE: Any = {CONVERSATION_META: "alice-conversation"}
BOB: Any = {CONVERSATION_META: "bob-conversation"}


@pytest.fixture
def anyio_backend() -> str:
    """The SDK's clients run on asyncio."""
    return "asyncio"


async def listed(client: Client, meta: Any) -> list[str]:
    """The tool names ``tools/list`` shows the caller of ``meta`` (never from a cache)."""
    result = await client.list_tools(meta=meta, cache_mode="bypass")
    return sorted(tool.name for tool in result.tools)


async def call(client: Client, meta: Any, tool: str, **arguments: Any) -> tuple[bool, str]:
    """Calls ``tool`` for the caller of ``meta``; whether it failed, and its text."""
    result = await client.call_tool(tool, arguments, meta=meta)
    text = "".join(getattr(block, "text", "") for block in result.content)
    return result.is_error, text


async def gate_opens_and_closes_for_one_caller(client: Client) -> None:
    """Alice's review opens refunds for Alice only; her refund closes it again."""
    assert await listed(client, ALICE) == ["orders"]
    failed, text = await call(client, ALICE, "refunds", action="issue", order_id="o-1")
    assert failed and 'code="OUT_OF_STATE"' in text and "'orders.review'" in text
    assert not (await call(client, ALICE, "orders", action="review", order_id="o-1"))[0]
    assert await listed(client, ALICE) == ["orders", "refunds"]
    assert await listed(client, BOB) == ["orders"]
    failed, text = await call(client, BOB, "refunds", action="issue", order_id="o-1")
    assert failed and 'code="OUT_OF_STATE"' in text
    assert await call(client, ALICE, "refunds", action="issue", order_id="o-1") == (
        False,
        "refunded o-1",
    )
    assert await listed(client, ALICE) == ["orders"]


async def test_workflow_gate_and_caller_state_over_stdio() -> None:
    """Over stdio the gate opens and closes per caller, and each caller's list follows."""
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "mcpfusion.cli", "run", TARGET], cwd=REPO
    )
    with anyio.fail_after(60):
        async with Client(server) as client:
            await gate_opens_and_closes_for_one_caller(client)


@asynccontextmanager
async def two_workers(redis_url: str) -> AsyncIterator[str]:
    """``mcpfusion run`` stateless with two workers sharing the Redis at ``redis_url``."""
    extra = ("--stateless", "--workers", "2", "--redis-url", redis_url)
    async with http_server(*extra, target=TARGET) as url:
        yield url


async def test_workflow_caller_state_across_two_workers_and_a_restart(tmp_path: Path) -> None:
    """Stateless HTTP, two workers on Redis: the gate holds per caller, whichever worker
    answers, and a caller's state survives the server's restart."""
    with redis_server(tmp_path / "redis") as redis:
        with anyio.fail_after(120):
            async with two_workers(redis.url) as url, Client(url) as client:
                await gate_opens_and_closes_for_one_caller(client)
                await call(client, ALICE, "orders", action="review", order_id="o-2")
            async with two_workers(redis.url) as url, Client(url) as client:
                assert await listed(client, ALICE) == ["orders", "refunds"]
                assert await listed(client, BOB) == ["orders"]
                assert await call(client, ALICE, "refunds", action="issue", order_id="o-2") == (
                    False,
                    "refunded o-2",
                )
