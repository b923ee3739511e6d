"""Stateful sessions behind deploy/nginx/sticky.conf: each stays on its replica, and a call's
SSE stream cut mid-call resumes with Last-Event-ID from Redis, losing nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.scale.services import Redis, cli, nginx, replicas

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]

VERSION = "2025-11-25"
STEPS = 8


async def events(response: httpx2.Response) -> AsyncIterator[tuple[str | None, dict[str, Any]]]:
    """The SSE events of a response: (id, JSON-RPC message); priming events are skipped."""
    event_id: str | None = None
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "":
            if data and "".join(data):
                yield event_id, json.loads("".join(data))
            event_id, data = None, []


class Session:
    """A handshake session (protocol 2025-11-25) over raw HTTP, through nginx."""

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.id = ""

    def headers(self, **extra: str) -> dict[str, str]:
        return {
            "Accept": "application/json, text/event-stream",
            "Mcp-Session-Id": self.id,
            "MCP-Protocol-Version": VERSION,
            **extra,
        }

    async def open(self) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": VERSION,
                "capabilities": {},
                "clientInfo": {"name": "resume", "version": "1"},
            },
        }
        accept = {"Accept": "application/json, text/event-stream"}
        response = await self.http.post(self.url, json=body, headers=accept)
        assert response.status_code == 200, response.text
        self.id = response.headers["mcp-session-id"]
        notified = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        response = await self.http.post(self.url, json=notified, headers=self.headers())
        assert response.status_code == 202, response.text

    def work(self, request_id: int) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {
                "name": "work_steps",
                "arguments": {"count": STEPS, "pause": 0.15},
                "_meta": {"progressToken": f"p{request_id}"},
            },
        }


def progress_of(messages: list[dict[str, Any]]) -> list[int]:
    return [
        int(m["params"]["progress"])
        for m in messages
        if m.get("method") == "notifications/progress"
    ]


async def test_a_cut_stream_resumes_on_its_replica_with_every_event_once(
    folder: Path, redis: Redis
) -> None:
    """Three sessions through sticky nginx; one call's stream cut after 3 steps resumes."""
    command = cli("tests.scale.apps:slow", "--redis-url", redis.url)
    with (
        replicas([command] * 3, folder) as started,
        nginx(folder / "nginx", "sticky.conf", [r.port for r in started]) as port,
    ):
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx2.AsyncClient(timeout=30) as http:
            sessions = [Session(http, url) for _ in range(3)]
            for session in sessions:
                await session.open()
            tags = {session.id.split(".")[0] for session in sessions}
            assert all(tag in {"r1", "r2", "r3"} for tag in tags)
            assert len(tags) > 1  # round-robin for new sessions

            # Every session's call reaches the replica holding it (another would say 404).
            for number, session in enumerate(sessions, start=1):
                response = await http.post(
                    url, json=session.work(number), headers=session.headers()
                )
                assert response.status_code == 200, response.text

            session = sessions[0]
            before: list[dict[str, Any]] = []
            last_id: str | None = None
            with anyio.fail_after(20):
                async with http.stream(
                    "POST", url, json=session.work(7), headers=session.headers()
                ) as response:
                    async for event_id, message in events(response):
                        before.append(message)
                        last_id = event_id
                        if len(progress_of(before)) == 3:
                            break  # the connection is dropped here, mid-call
            assert last_id is not None

            # Another session cannot replay this one's events.
            other = sessions[1]
            async with http.stream(
                "GET", url, headers=other.headers(**{"Last-Event-ID": last_id})
            ) as response:
                with anyio.fail_after(10):
                    stolen = [message async for _, message in events(response)]
            assert stolen == []

            after: list[dict[str, Any]] = []
            with anyio.fail_after(20):
                async with http.stream(
                    "GET", url, headers=session.headers(**{"Last-Event-ID": last_id})
                ) as response:
                    assert response.status_code == 200
                    async for _, message in events(response):
                        after.append(message)
                        if message.get("id") == 7:
                            break
    assert progress_of(before) == [1, 2, 3]
    assert progress_of(before) + progress_of(after) == list(range(1, STEPS + 1))
    result = after[-1]
    assert result["id"] == 7
    assert result["result"]["content"][0]["text"].startswith(f"done {STEPS}")
