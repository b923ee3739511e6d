"""Attacks between clients of one HTTP server: sessions held, batches amplified, calls cancelled."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest

from mcpfusion import Identity
from mcpfusion.auth import APIKeyVerifier, Auth, hash_api_key
from tests.attack.test_http import HEADERS, served
from tests.e2e.sample_app import STATE
from tests.e2e.servers import uvicorn_in_process

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


def _keys(*names: str) -> Auth:
    """API-key authorization: the key ``key-<name>`` proves the identity ``<name>``."""
    keys = {hash_api_key(f"key-{n}"): Identity(n, scopes={"mcp"}) for n in names}
    return Auth(
        verifier=APIKeyVerifier(keys),
        resource="http://127.0.0.1/mcp",
        authorization_servers=["https://id.example.com"],
    )


def _wait_call(request_id: int, seconds: float) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "wait", "seconds": seconds}},
    }


async def _until(key: str, value: int) -> None:
    """Waits until the sample app's ``STATE[key]`` reaches ``value`` (callers bound it)."""
    while STATE[key] < value:
        await anyio.sleep(0.01)


# -- cancellations reach the canceller's own call only -----------------------------------


async def test_an_anonymous_stateless_cancellation_stops_no_one_elses_call() -> None:
    """Stateless and anonymous (behind a proxy every client shares one address), a
    cancellation naming another client's request id leaves that call running to its answer."""
    headers = {**HEADERS, "mcp-protocol-version": "2025-11-25"}
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8}}
    events: list[str] = []
    before = dict(STATE)
    with anyio.fail_after(30):
        async with (
            uvicorn_in_process(served(stateless=True)) as port,
            httpx2.AsyncClient(timeout=20) as victim,
            httpx2.AsyncClient(timeout=20) as attacker,
        ):
            url = f"http://127.0.0.1:{port}/mcp"

            async def stream_the_call() -> None:
                call = _wait_call(8, 3)
                async with victim.stream("POST", url, json=call, headers=headers) as response:
                    async for line in response.aiter_lines():
                        if line.startswith("data:"):
                            events.append(line)

            async with anyio.create_task_group() as group:
                group.start_soon(stream_the_call)
                await _until("started", before["started"] + 1)
                accepted = await attacker.post(url, json=cancel, headers=headers)
    assert accepted.status_code == 202
    assert len(events) == 1 and "waited 3" in events[0]
    assert STATE["cancelled"] == before["cancelled"]
    assert STATE["finished"] == before["finished"] + 1


async def test_an_authenticated_stateless_cancellation_skips_other_credentials() -> None:
    """Stateless with auth, another credential's cancellation of the same request id leaves
    the call running to its answer."""
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8}}
    base = {**HEADERS, "mcp-protocol-version": "2025-11-25"}
    events: list[str] = []
    before = dict(STATE)
    with anyio.fail_after(30):
        async with (
            uvicorn_in_process(served(stateless=True, auth=_keys("a", "b"))) as port,
            httpx2.AsyncClient(timeout=20) as http,
        ):
            url = f"http://127.0.0.1:{port}/mcp"

            async def stream_the_call() -> None:
                call = _wait_call(8, 3)
                mine = {**base, "authorization": "Bearer key-a"}
                async with http.stream("POST", url, json=call, headers=mine) as response:
                    async for line in response.aiter_lines():
                        if line.startswith("data:"):
                            events.append(line)

            async with anyio.create_task_group() as group:
                group.start_soon(stream_the_call)
                await _until("started", before["started"] + 1)
                theirs = {**base, "authorization": "Bearer key-b"}
                other = await http.post(url, json=cancel, headers=theirs)
    assert other.status_code == 202
    assert len(events) == 1 and "waited 3" in events[0]
    assert STATE["cancelled"] == before["cancelled"]
