"""Request state over real HTTP: 2026-07-28 rounds across workers and replicas, bound to
their caller, and listen streams under the resources' scopes."""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from mcpfusion import HttpOptions, Identity
from mcpfusion.auth import APIKeyVerifier, Auth, hash_api_key
from mcpfusion.server import asgi_app
from tests.attack.request_state_app import app
from tests.e2e import servers
from tests.e2e.auth_servers import serving

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

TARGET = f"{Path(__file__).with_name('request_state_app.py')}:app"
PROTOCOL = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientInfo": {"name": "attack", "version": "0.1.0"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
DELETE = {"action": "delete", "order_id": "A-1"}
CONFIRMED = {"action": "accept", "content": {"confirm": True}}
ATTEMPTS = 100
"""Second rounds sent at most until both workers have answered one (the kernel picks the
worker of each new connection)."""
REFUSED = {"code": -32602, "message": "Invalid or expired requestState"}

ALICE = "alice-key-" + "a" * 32
MALLORY = "mallory-key-" + "m" * 32
ALICE_ELSEWHERE = "alice-globex-key-" + "g" * 32
CALLERS = {
    ALICE: Identity("alice", scopes={"vault:read"}, tenant="acme"),
    MALLORY: Identity("mallory", tenant="globex"),
    ALICE_ELSEWHERE: Identity("alice", scopes={"vault:read"}, tenant="globex"),
}


def _body(text: str, content_type: str) -> dict[str, Any]:
    """The JSON-RPC message of an answer: a JSON body, or an SSE stream's last event."""
    if content_type.startswith("text/event-stream"):
        data = [line[5:] for line in text.splitlines() if line.startswith("data:")]
        text = data[-1]
    message: dict[str, Any] = json.loads(text)
    return message


def _headers(method: str, key: str | None, name: str | None = None) -> dict[str, str]:
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    return headers


async def rpc(url: str, method: str, params: dict[str, Any], key: str | None) -> dict[str, Any]:
    """One 2026-07-28 request on a new connection (so any worker may take it); its answer."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    headers = _headers(method, key, params.get("name"))
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(url, json=body, headers=headers)
    message = _body(response.text, response.headers.get("content-type", ""))
    # An invalid-params error comes with HTTP 400 on 2026-07-28, an answer with 200.
    assert response.status_code == (400 if "error" in message else 200), response.text
    return message


async def first_round(url: str, key: str | None = None) -> tuple[str, str]:
    """Calls the confirmed action: the key of the question it asks and the sealed state."""
    message = await rpc(url, "tools/call", {"name": "orders", "arguments": DELETE}, key)
    result = message["result"]
    assert result["resultType"] == "input_required", result
    (asked,) = result["inputRequests"]
    return asked, result["requestState"]


async def second_round(url: str, asked: str, state: str, key: str | None = None) -> dict[str, Any]:
    """Calls again with the confirmation and the state: the JSON-RPC answer."""
    params = {
        "name": "orders",
        "arguments": DELETE,
        "inputResponses": {asked: CONFIRMED},
        "requestState": state,
    }
    return await rpc(url, "tools/call", params, key)


def deleted_by(message: dict[str, Any]) -> str:
    """The process that ran the confirmed deletion (the answer must be its success)."""
    assert "error" not in message, message
    result = message["result"]
    assert not result.get("isError"), result
    text: str = result["content"][0]["text"]
    assert text.startswith("deleted A-1 in "), text
    return text.rsplit(" ", 1)[-1]


# -- item 8: rounds across workers and replicas -----------------------------------------------


async def test_a_confirmation_completes_on_either_worker() -> None:
    """--workers 2 without a key: the second round is taken by whichever worker gets it."""
    async with servers.http_process("--stateless", "--workers", "2", target=TARGET) as (url, _):
        answered_by: set[str] = set()
        with anyio.fail_after(180):
            asked, state = await first_round(url)
            for _ in range(ATTEMPTS):
                answered_by.add(deleted_by(await second_round(url, asked, state)))
                if len(answered_by) == 2:
                    break
    assert len(answered_by) == 2, f"one worker took all {ATTEMPTS} connections"


async def test_replicas_sharing_a_key_take_each_others_rounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Replicas given one key (MCPFUSION_REQUEST_STATE_KEY) accept each other's state; a
    replica with another key (--request-state-key) refuses it."""
    monkeypatch.setenv("MCPFUSION_REQUEST_STATE_KEY", secrets.token_hex(32))
    other = ("--request-state-key", secrets.token_hex(32))
    with anyio.fail_after(120):
        async with (
            servers.http_process("--stateless", target=TARGET) as (first, one),
            servers.http_process("--stateless", target=TARGET) as (second, two),
            servers.http_process("--stateless", *other, target=TARGET) as (stranger, _),
        ):
            asked, state = await first_round(first)
            assert deleted_by(await second_round(second, asked, state)) == str(two.pid)
            assert deleted_by(await second_round(first, asked, state)) == str(one.pid)
            refused = await second_round(stranger, asked, state)
    assert {k: refused["error"].get(k) for k in REFUSED} == REFUSED


# -- item 9: the state belongs to its caller --------------------------------------------------


@asynccontextmanager
async def secured() -> AsyncIterator[str]:
    """The app behind API keys of two tenants, stateless, in this process: its URL."""

    def make(port: int) -> Any:
        auth = Auth(
            verifier=APIKeyVerifier({hash_api_key(k): who for k, who in CALLERS.items()}),
            resource=f"http://127.0.0.1:{port}/mcp",
            authorization_servers=["https://id.example.com"],
        )
        return asgi_app(app, HttpOptions(auth=auth, stateless=True))

    async with serving(make) as port:
        yield f"http://127.0.0.1:{port}/mcp"


async def test_another_callers_state_is_refused() -> None:
    """Alice's sealed state is refused with another caller's key (another tenant's, or
    hers in another tenant), and accepted with hers."""
    async with secured() as url:
        with anyio.fail_after(60):
            asked, state = await first_round(url, ALICE)
            stolen = [
                await second_round(url, asked, state, key) for key in (MALLORY, ALICE_ELSEWHERE)
            ]
            mine = await second_round(url, asked, state, ALICE)
    for refused in stolen:
        assert {k: refused["error"].get(k) for k in REFUSED} == REFUSED
    assert deleted_by(mine)


# -- item 10: listen streams follow what the caller may read ----------------------------------


async def first_frame(url: str, key: str, uris: Sequence[str]) -> dict[str, Any]:
    """Opens a listen stream following ``uris``: its first message (the ack, or an error)."""
    params = {"notifications": {"resourceSubscriptions": list(uris)}, "_meta": META}
    body = {"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": params}
    headers = _headers("subscriptions/listen", key)
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        http.stream("POST", url, json=body, headers=headers) as response,
    ):
        kind = response.headers.get("content-type", "")
        if not kind.startswith("text/event-stream"):
            return _body((await response.aread()).decode(), kind)
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                message: dict[str, Any] = json.loads(line[5:])
                return message
    raise AssertionError("the stream ended without a message")


async def test_listen_refuses_a_resource_the_caller_may_not_read() -> None:
    """subscriptions/listen on a resource whose scopes the caller lacks is refused as
    resources/subscribe refuses it (as if unknown); its reader is acknowledged."""
    async with secured() as url:
        with anyio.fail_after(60):
            refused = await first_frame(url, MALLORY, ["vault://keys"])
            unknown = await first_frame(url, MALLORY, ["vault://nothing"])
            acknowledged = await first_frame(url, ALICE, ["vault://keys"])
    assert refused["error"]["code"] == unknown["error"]["code"] == -32602
    assert refused["error"]["message"] == "Resource not found: vault://keys"
    assert unknown["error"]["message"] == "Resource not found: vault://nothing"
    assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
    assert acknowledged["params"]["notifications"] == {"resourceSubscriptions": ["vault://keys"]}


# -- issue 30: a confirmation is sealed with what it confirms -----------------------------------


async def test_a_confirmation_for_one_order_cannot_delete_another() -> None:
    """A-1's confirmation key and sealed state with A-2's arguments are refused; an
    unsolicited answer under A-2's own confirmation key is asked again: only the answer to
    the question this server asked, for these arguments, confirms."""
    async with servers.http_process("--stateless", target=TARGET) as (url, _):
        with anyio.fail_after(60):
            asked, state = await first_round(url)
            assert asked.startswith("confirm:")
            other = {"action": "delete", "order_id": "A-2"}
            params = {
                "name": "orders",
                "arguments": other,
                "inputResponses": {asked: CONFIRMED},
                "requestState": state,
            }
            replayed = await rpc(url, "tools/call", params, None)
            assert replayed["error"]["data"]["reason"] == "invalid_request_state", replayed
            first = await rpc(url, "tools/call", {"name": "orders", "arguments": other}, None)
            (own,) = first["result"]["inputRequests"]
            assert own != asked
            unsolicited = {"name": "orders", "arguments": other, "inputResponses": {own: CONFIRMED}}
            answer = await rpc(url, "tools/call", unsolicited, None)
            assert answer["result"]["resultType"] == "input_required", answer
            assert deleted_by(await second_round(url, asked, state)) != ""
