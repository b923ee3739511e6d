"""SSE resumption across tenants: a ``Last-Event-ID`` under one's own session prefix never
replays another session's events, from the in-memory store or from Redis."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from mcpfusion import Context, Fusion, Identity
from mcpfusion.auth import APIKeyVerifier, Auth, hash_api_key
from mcpfusion.redis import RedisEventStore
from mcpfusion.server import asgi_app
from tests.e2e.servers import uvicorn_in_process
from tests.scale.services import redis_server

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

VERSION = "2025-11-25"
KEYS = {"northwind": "key-northwind", "globex": "key-globex"}


def _app() -> Fusion:
    app = Fusion("ledger")

    @app.tool("billing").action(read_only=True)
    async def get_invoice(ctx: Context) -> str:
        """Logs and answers with the caller's tenant's secret."""
        tenant = ctx.identity.tenant if ctx.identity else None
        await ctx.log("info", f"secret of {tenant}")
        return f"invoice of {tenant}"

    return app


def _auth() -> Auth:
    keys = {
        hash_api_key(key): Identity(tenant, scopes={"mcp"}, tenant=tenant)
        for tenant, key in KEYS.items()
    }
    return Auth(
        verifier=APIKeyVerifier(keys),
        resource="http://127.0.0.1/mcp",
        authorization_servers=["https://id.example.com"],
    )


async def _events(response: httpx2.Response) -> AsyncIterator[tuple[str | None, Any]]:
    """The SSE events of a response: (id, message or None for a priming event)."""
    event_id: str | None = None
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "":
            if event_id is not None or data:
                text = "".join(data)
                yield event_id, json.loads(text) if text else None
            event_id, data = None, []


class Tenant:
    """One tenant's stateful session over raw HTTP."""

    def __init__(self, http: httpx2.AsyncClient, url: str, name: str) -> None:
        self.http, self.url, self.name, self.session = http, url, name, ""

    def headers(self, **extra: str) -> dict[str, str]:
        headers = {
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {KEYS[self.name]}",
            "MCP-Protocol-Version": VERSION,
            **extra,
        }
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        return headers

    async def open(self) -> Tenant:
        initialize = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": VERSION,
                "capabilities": {},
                "clientInfo": {"name": self.name, "version": "1"},
            },
        }
        opened = await self.http.post(self.url, json=initialize, headers=self.headers())
        assert opened.status_code == 200, opened.text
        self.session = opened.headers["mcp-session-id"]
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        confirmed = await self.http.post(self.url, json=done, headers=self.headers())
        assert confirmed.status_code == 202
        return self

    async def call(self, request_id: int) -> list[tuple[str | None, Any]]:
        """Calls get_invoice; every event of its SSE stream, priming included."""
        body = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "billing", "arguments": {"action": "get_invoice"}},
        }
        async with self.http.stream("POST", self.url, json=body, headers=self.headers()) as sent:
            assert sent.status_code == 200
            return [event async for event in _events(sent)]

    async def resume(self, last_event_id: str, *, until: int | None = None) -> list[Any]:
        """GETs with ``Last-Event-ID``; the messages replayed (up to response ``until``)."""
        heard: list[Any] = []
        headers = self.headers(**{"Last-Event-ID": last_event_id})
        async with self.http.stream("GET", self.url, headers=headers) as response:
            async for _, message in _events(response):
                if message is not None:
                    heard.append(message)
                    if until is not None and message.get("id") == until:
                        break
        return heard


@asynccontextmanager
async def _tenants(**options: Any) -> AsyncIterator[tuple[Tenant, Tenant]]:
    asgi = asgi_app(_app(), auth=_auth(), **options)
    async with uvicorn_in_process(asgi) as port, httpx2.AsyncClient(timeout=10) as http:
        url = f"http://127.0.0.1:{port}/mcp"
        yield await Tenant(http, url, "northwind").open(), await Tenant(http, url, "globex").open()


def _texts(messages: list[Any]) -> str:
    return json.dumps(messages)


async def test_in_memory_ids_of_another_session_replay_nothing() -> None:
    """Northwind sending its own prefix with Globex's (globally numbered) event ids hears
    nothing of Globex; its own id replays its own call."""
    with anyio.fail_after(30):
        async with _tenants(resumable=True) as (northwind, globex):
            mine = await northwind.call(1)
            theirs = await globex.call(1)
            numbers = [i.rpartition(".")[2] for i, _ in theirs if i is not None]
            assert numbers and all(number.isdigit() for number in numbers)
            stolen = []
            for number in numbers:
                stolen += await northwind.resume(f"{northwind.session}.{number}")
            own = await northwind.resume(mine[0][0] or "", until=1)
    assert "secret of globex" in _texts([m for _, m in theirs])
    assert stolen == []
    assert "secret of northwind" in _texts(own)


async def test_redis_ids_naming_another_sessions_stream_replay_nothing(tmp_path: Path) -> None:
    """With the Redis store, Northwind naming Globex's stream after its own prefix hears
    nothing; its own id replays its own call."""
    with redis_server(tmp_path / "redis") as redis, anyio.fail_after(30):
        async with _tenants(event_store=RedisEventStore(redis.url)) as (northwind, globex):
            mine = await northwind.call(1)
            theirs = await globex.call(1)
            first = theirs[0][0]
            assert first is not None and first.startswith(f"{globex.session}.")
            forged = f"{northwind.session}.{first.removeprefix(globex.session + '.')}"
            stolen = await northwind.resume(forged)
            own = await northwind.resume(mine[0][0] or "", until=1)
    assert "secret of globex" in _texts([m for _, m in theirs])
    assert stolen == []
    assert "secret of northwind" in _texts(own)
