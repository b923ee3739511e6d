"""Soak: 20,000 calls over HTTP, and the server's memory stops growing."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx2
import pytest

from tests.e2e import servers

pytestmark = [pytest.mark.e2e, pytest.mark.anyio, pytest.mark.slow]

CALLS = 20_000
CLIENTS = 10
GROWTH_LIMIT_KB = 5 * 1024
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}


def rss_kb(pid: int) -> int:
    """The process's resident set size, in KiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for process {pid}")


async def test_twenty_thousand_calls_leave_memory_flat() -> None:
    """Over the last half of 20,000 stateless calls (a presented invoice, an error, a list),
    the server's RSS grows by at most 5 MB."""
    bodies = [
        {"name": "billing", "arguments": {"action": "get", "invoice_id": "INV-1"}},
        {"name": "billing", "arguments": {"action": "get", "invoice_id": "INV-404"}},
        {"name": "billing", "arguments": {"action": "list"}},
        {"name": "billing", "arguments": {"action": "get", "_select": ["nope"]}},
    ]
    sent = 0
    answered = 0
    with anyio.fail_after(600):
        async with servers.http_process("--stateless") as (url, process):
            pid = process.pid

            async def client(calls: int) -> None:
                nonlocal sent, answered
                async with httpx2.AsyncClient(timeout=30) as http:
                    for _ in range(calls):
                        request = {
                            "jsonrpc": "2.0",
                            "id": sent,
                            "method": "tools/call",
                            "params": bodies[sent % len(bodies)],
                        }
                        sent += 1
                        response = await http.post(url, json=request, headers=HEADERS)
                        assert response.status_code == 200, response.text[:200]
                        answered += 1

            async def half() -> None:
                async with anyio.create_task_group() as group:
                    for _ in range(CLIENTS):
                        group.start_soon(client, CALLS // 2 // CLIENTS)

            await half()
            middle = rss_kb(pid)
            await half()
            end = rss_kb(pid)
    assert answered == CALLS
    assert end - middle <= GROWTH_LIMIT_KB, f"RSS grew {end - middle} KiB over the last half"
