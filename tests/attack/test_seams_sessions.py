"""Attacks between clients of one HTTP server: sessions held, batches amplified, calls cancelled."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest

from mcpfusion import Identity
from mcpfusion.auth import APIKeyVerifier, Auth, hash_api_key
from tests.attack.test_http import HEADERS, INITIALIZE, PING, _session, served
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


# -- one credential cannot take every session ------------------------------------------


async def test_one_credential_cannot_take_every_session() -> None:
    """A credential that opens sessions up to its cap gets 503 for the next one, while
    another credential still opens sessions under the server's max_sessions."""
    options = {"auth": _keys("a", "b"), "max_sessions": 4, "max_sessions_per_credential": 2}
    with anyio.fail_after(30):
        async with (
            uvicorn_in_process(served(**options)) as port,
            httpx2.AsyncClient(timeout=20) as http,
        ):
            url = f"http://127.0.0.1:{port}/mcp"

            async def open_as(name: str) -> httpx2.Response:
                headers = {**HEADERS, "authorization": f"Bearer key-{name}"}
                return await http.post(url, json=INITIALIZE, headers=headers)

            hoarded = [(await open_as("a")).status_code for _ in range(4)]
            others = [(await open_as("b")).status_code for _ in range(2)]
            past_the_server_cap = await open_as("b")
    assert hoarded == [200, 200, 503, 503]
    assert others == [200, 200]
    assert past_the_server_cap.status_code == 503
    assert past_the_server_cap.json()["error"]["message"] == "Too many open sessions"


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


# -- batches: bounded, stopped with their client, only where the version has them ---------


async def test_a_batch_past_the_bound_is_refused_whole() -> None:
    """A batch of more than max_batch_size messages is refused with one -32600, before any
    member runs; a batch within the bound is served."""
    pings = [{**PING, "id": n} for n in range(4)]
    with anyio.fail_after(30):
        async with (
            uvicorn_in_process(served(stateless=True, max_batch_size=3)) as port,
            httpx2.AsyncClient(timeout=20) as http,
        ):
            url = f"http://127.0.0.1:{port}/mcp"
            refused = await http.post(url, json=pings, headers=HEADERS)
            served_ = await http.post(url, json=pings[:3], headers=HEADERS)
    assert refused.status_code == 400
    assert refused.json()["id"] is None
    assert refused.json()["error"] == {
        "code": -32600,
        "message": "Invalid Request: a batch of 4 messages; at most 3 are served",
    }
    assert served_.status_code == 200
    assert sorted(a["id"] for a in served_.json()) == [0, 1, 2]


async def test_a_batch_stops_when_its_client_goes_away() -> None:
    """A client that hangs up mid-batch gets its running member cancelled and the rest
    never started."""
    batch = [_wait_call(n, 60) for n in (1, 2, 3)]
    before = dict(STATE)
    with anyio.fail_after(30):
        async with uvicorn_in_process(served(stateless=True)) as port:
            url = f"http://127.0.0.1:{port}/mcp"
            async with anyio.create_task_group() as group:

                async def send_the_batch() -> None:
                    async with httpx2.AsyncClient(timeout=60) as http:
                        await http.post(url, json=batch, headers=HEADERS)

                group.start_soon(send_the_batch)
                await _until("started", before["started"] + 1)
                group.cancel_scope.cancel()  # the connection closes unanswered
            await _until("cancelled", before["cancelled"] + 1)
            async with httpx2.AsyncClient(timeout=20) as http:
                pong = await http.post(url, json=PING, headers=HEADERS)
    assert pong.status_code == 200
    assert STATE["started"] == before["started"] + 1
    assert STATE["finished"] == before["finished"]


async def test_a_sessions_batch_follows_its_negotiated_version() -> None:
    """In a session, the version negotiated at initialize decides whether a batch is
    served: a 2025-11-25 session's batch is refused with or without a header claiming
    2025-03-26; a 2025-03-26 session's is served."""
    batch = [PING, {**PING, "id": 2}]
    with anyio.fail_after(30):
        async with (
            uvicorn_in_process(served()) as port,
            httpx2.AsyncClient(timeout=20) as http,
        ):
            url = f"http://127.0.0.1:{port}/mcp"
            modern = await _session(http, port, "2025-11-25")
            bare = {k: v for k, v in modern.items() if k != "mcp-protocol-version"}
            claimed = {**bare, "mcp-protocol-version": "2025-03-26"}
            without_header = await http.post(url, json=batch, headers=bare)
            with_old_header = await http.post(url, json=batch, headers=claimed)
            old = await http.post(url, json=batch, headers=await _session(http, port, "2025-03-26"))
    for refused in (without_header, with_old_header):
        assert refused.status_code == 400
        assert [a["error"]["message"] for a in refused.json()] == [
            'Invalid Request: no batches at protocol version "2025-11-25"'
        ] * 2
    assert old.status_code == 200
    assert sorted(str(a["id"]) for a in old.json()) == ["2", "p"]
