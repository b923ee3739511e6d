"""Events over Redis: a payment on replica A reaches a listener on replica B, and a Redis
restart loses no tool call (events flow again once the buses reconnect); stopping B ends
its listen stream gracefully."""

from __future__ import annotations

import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.subscriptions import ResourceUpdated

from examples.billing import demo_keys
from tests.scale import load
from tests.scale.apps import invoice_uri
from tests.scale.services import redis_server, replicas

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]


@asynccontextmanager
async def official_client(port: int) -> AsyncIterator[Client]:
    """The official MCP client (protocol 2026-07-28) with a write key, on one replica."""
    headers = {"Authorization": f"Bearer {demo_keys.NORTHWIND_WRITE}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client,
    ):
        yield client


async def pay(client: Client, invoice_id: str) -> Any:
    """mark_paid through the official client; the invoice it returns."""
    result = await client.call_tool("billing", {"action": "mark_paid", "invoice_id": invoice_id})
    assert not result.is_error, result.content
    return result


async def test_a_payment_on_one_replica_reaches_a_listener_on_another_across_a_redis_restart(
    folder: Path,
) -> None:
    """mark_paid on A invalidates on B; with Redis down calls still work; then events flow."""
    db = folder / "billing.db"
    unpaid = load.snapshot(db).unpaid[:40]
    with redis_server(folder / "redis") as redis:
        command = [sys.executable, "-m", "tests.scale.apps", "--db", str(db)]
        command += ["--redis-url", redis.url]
        with replicas([command, command], folder) as (a, b):
            async with official_client(a.port) as on_a, official_client(b.port) as on_b:
                uris = [invoice_uri(i) for i in unpaid]
                async with on_b.listen(resource_subscriptions=uris) as events:
                    # The first payment: from A's handler to B's listener through Redis.
                    # It invalidates billing.*, so B is told of every invoice it follows.
                    await pay(on_a, unpaid[0])
                    told = set()
                    with anyio.fail_after(10):
                        told.add(await events.__anext__())
                    while len(told) < len(uris):
                        with anyio.move_on_after(2):
                            told.add(await events.__anext__())
                            continue
                        break
                    assert told == {ResourceUpdated(uri) for uri in uris}

                    # Redis down: every call still answers; the event is lost (at most once).
                    redis.stop()
                    for invoice_id in unpaid[1:6]:
                        await pay(on_a, invoice_id)
                    redis.start()

                    # Back: a payment published after both buses reconnect reaches B.
                    received: list[Any] = []
                    with anyio.fail_after(30):
                        for invoice_id in unpaid[6:]:
                            await pay(on_a, invoice_id)
                            with anyio.move_on_after(0.5):
                                received.append(await events.__anext__())
                                break
                    assert received
                    assert isinstance(received[0], ResourceUpdated)
                    assert received[0].uri in uris

                    # SIGTERM on B ends its listen stream gracefully (a final result, not
                    # a dropped connection) at once, not after the grace period.
                    b.process.send_signal(signal.SIGTERM)
                    with anyio.fail_after(10):
                        async for _ in events:
                            pass
            log = a.output()
    # Once per outage, not per call: A published five events into it.
    assert log.count("is unreachable") == 1, log
    assert "server events are dropped" in log
    assert log.count("is back") >= 1, log
