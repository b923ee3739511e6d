"""The HTTP hot path at 2026-07-28 over real HTTP: each POST's status, headers and bytes
compared with the SDK's own answer (the same app served with ``hot_path=False``), in every
session mode, and the official client in its default mode."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.server import _streamable_http_modern

from mcpfusion import Fusion
from mcpfusion._serve.http import modern
from mcpfusion._serve.http.modern import ModernCalls
from mcpfusion.redis import shared_state
from mcpfusion.server import asgi_app
from tests.e2e import sample_app, surface_app
from tests.e2e.servers import uvicorn_in_process
from tests.scale.services import redis_server

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
GET = {"action": "get", "invoice_id": "INV-3"}
MODES = [
    pytest.param({}, id="stateful-sse"),
    pytest.param({"json_response": True}, id="stateful-json"),
    pytest.param({"stateless": True}, id="stateless-sse"),
    pytest.param({"stateless": True, "json_response": True}, id="stateless-json"),
]
_VARYING = frozenset({"date", "server"})


def _call(request_id: Any, tool: str, arguments: Any, **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": arguments, "_meta": {**ENVELOPE, **meta}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _headers(message: Any) -> dict[str, str]:
    """The headers the official client sends with a 2026-07-28 request."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
    }
    if isinstance(message, dict) and isinstance(message.get("method"), str):
        headers["Mcp-Method"] = message["method"]
        params = message.get("params")
        if isinstance(params, dict) and isinstance(params.get("name"), str):
            headers["Mcp-Name"] = params["name"]
    return headers


def _seen(response: httpx2.Response) -> tuple[int, list[tuple[str, str]], bytes]:
    """What a client sees of a response, but for the date and the server's name."""
    headers = [(k, v) for k, v in response.headers.multi_items() if k not in _VARYING]
    return response.status_code, headers, response.content


class Taken:
    """Counts the requests the hot path answered (the SDK answers the rest)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        take = ModernCalls.take

        async def counted(calls: ModernCalls, *args: Any) -> bool:
            taken = await take(calls, *args)
            self.count += taken
            return taken

        monkeypatch.setattr(ModernCalls, "take", counted)


@asynccontextmanager
async def both(app: Any, **options: Any) -> AsyncIterator[tuple[str, str, httpx2.AsyncClient]]:
    """The app with the hot path and without it (the SDK's); their URLs and a client."""
    async with (
        uvicorn_in_process(asgi_app(app, **options)) as hot,
        uvicorn_in_process(asgi_app(app, hot_path=False, **options)) as sdk,
        httpx2.AsyncClient(timeout=10) as http,
    ):
        yield f"http://127.0.0.1:{hot}/mcp", f"http://127.0.0.1:{sdk}/mcp", http


async def _compare(
    app: Any, options: dict[str, Any], messages: list[Any], **extra: str
) -> list[httpx2.Response]:
    """POSTs each message to both servers; asserts the same answers; returns the hot ones."""
    answers = []
    with anyio.fail_after(60):
        async with both(app, **options) as (hot, sdk, http):
            for message in messages:
                headers = {**_headers(message), **extra}
                body = json.dumps(message).encode()  # escaped: a lone surrogate goes too
                fast = await http.post(hot, content=body, headers=headers)
                slow = await http.post(sdk, content=body, headers=headers)
                assert _seen(fast) == _seen(slow), message
                answers.append(fast)
    return answers


@pytest.mark.parametrize("options", MODES)
async def test_calls_get_the_sdks_bytes(
    options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Results, errors, unknown tools, bad arguments, ids beyond 64 bits, text with control
    characters, DEL and non-ASCII: the SDK's answers."""
    taken = Taken(monkeypatch)
    messages = [
        _call(1, "billing", GET),
        _call("two", "billing", {"action": "fail"}),
        _call(3, "nope", {}),
        _call(4, "billing", {"action": "get"}),
        _call(5, "billing", {"action": "get", "invoice_id": 5}),
        _call(6, "billing", {"action": "note", "text": "café ✓ \u2028 </x>"}),
        _call(7, "reports", {"action": "totals"}),
        _call(8, "hazards", {"action": "warn"}),
        _call(9, "billing", None),
        _call(10, "billing", {"action": "export", "rows": 2}),
        _call(10**30, "billing", GET),
        _call(-(2**63) - 1, "billing", GET),
        _call("\u00e9\x7f\t\x01", "billing", {"action": "get", "invoice_id": "INV-\x7f\t\x01/\\"}),
        _call(11, "billing", {"action": "get", "invoice_id": "INV-\ud800 \u2028 ✓"}),
    ]
    answers = await _compare(sample_app.app, options, messages)
    assert answers[0].status_code == 200 and b"INV-3" in answers[0].content
    assert "mcp-session-id" not in answers[0].headers
    assert answers[-1].status_code == 400  # a lone surrogate: the guard's parse error
    assert taken.count == len(messages) - 1


@pytest.mark.parametrize("options", MODES)
async def test_progress_streams_as_the_sdk_does(
    options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a progress token: an event stream of reports then the result, or with JSON
    answers the result alone, byte for byte the SDK's."""
    taken = Taken(monkeypatch)
    messages = [
        _call(1, "billing", {"action": "export", "rows": 3}, progressToken="tok"),
        _call(2, "hazards", {"action": "progress", "payload": "nan"}, progressToken=7),
        _call(3, "hazards", {"action": "progress", "payload": "surrogate"}, progressToken=8),
    ]
    answers = await _compare(sample_app.app, options, messages)
    streamed = not options.get("json_response")
    assert answers[0].headers["content-type"] == (
        "text/event-stream" if streamed else "application/json"
    )
    assert answers[0].content.count(b"notifications/progress") == (3 if streamed else 0)
    assert taken.count == len(messages)


def _needy() -> Fusion:
    app = Fusion("needs")
    tool = app.tool("t", description="Needs the client.")

    @tool.action(requires_client=["sampling"])
    async def needs() -> str:
        """Cannot run without sampling."""
        return "ran"

    return app


@pytest.mark.parametrize("options", MODES)
async def test_a_call_needing_what_the_client_lacks_is_refused_as_by_the_sdk(
    options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An action requiring sampling, from a client that declared none: the SDK's -32021 and
    its 400; a handler that asks such a client anyway: the SDK's tool error."""
    taken = Taken(monkeypatch)
    answers = await _compare(_needy(), options, [_call(1, "t", {"action": "needs"})])
    assert answers[0].status_code == 400
    assert answers[0].json()["error"]["code"] == -32021
    answers = await _compare(surface_app.app, options, [_call(2, "talk", {"action": "chat"})])
    assert b"UNSUPPORTED_BY_CLIENT" in answers[0].content
    assert taken.count == 2


def _with(message: dict[str, Any], **params: Any) -> dict[str, Any]:
    return {**message, "params": {**message["params"], **params}}


def _meta(**changes: Any) -> dict[str, Any]:
    return {**ENVELOPE, **changes}


@pytest.mark.parametrize("options", MODES)
async def test_everything_else_is_the_sdks(
    options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Odd ids and params, other envelopes, other methods, notifications, batches and
    broken bodies are left to the SDK (or the guard): the same answers, none taken."""
    taken = Taken(monkeypatch)
    call = _call(1, "billing", GET)
    capability = "io.modelcontextprotocol/clientCapabilities"
    messages = [
        {**call, "id": None},
        {**call, "id": 1.5},
        {**call, "id": True},
        {**call, "jsonrpc": "1.0"},
        {**call, "extra": 1},
        _with(call, name=3),
        _with(call, arguments=[]),
        _with(call, task={"ttl": 1000}),
        _with(call, _meta=_meta(**{capability: {"elicitation": {}}})),
        _with(call, _meta=_meta(**{capability: []})),
        _with(call, _meta=_meta(**{"io.modelcontextprotocol/protocolVersion": "2099-01-01"})),
        _with(call, _meta=_meta(**{"io.modelcontextprotocol/clientInfo": {"name": 1}})),
        _with(
            call, _meta=_meta(traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        ),
        _with(call, _meta=_meta(progressToken=None)),
        _with(call, _meta={"io.modelcontextprotocol/protocolVersion": MODERN}),
        _with(call, _meta=None),
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": ENVELOPE}},
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": ENVELOPE}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        [call],
        "a string",
    ]
    await _compare(sample_app.app, options, messages)
    assert taken.count == 0


@pytest.mark.parametrize(
    "headers",
    [
        {"Mcp-Name": "reports"},
        {"Mcp-Method": "tools/list"},
        {"MCP-Protocol-Version": "2099-01-01"},
        {"Accept": "application/json"},
        {"Accept": "text/event-stream"},
    ],
)
async def test_headers_that_disagree_are_the_sdks(
    headers: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A routing header the body contradicts, Mcp-Param headers, or an Accept the SDK refuses
    (406): the SDK's answers, none taken."""
    taken = Taken(monkeypatch)
    await _compare(sample_app.app, {}, [_call(1, "billing", GET)], **headers)
    assert taken.count == 0


async def test_an_undeclared_param_header_is_ignored_as_by_the_sdk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An Mcp-Param header no input schema declares changes nothing: answered hot, as the
    SDK answers it."""
    taken = Taken(monkeypatch)
    await _compare(sample_app.app, {}, [_call(1, "billing", GET)], **{"Mcp-Param-Invoice": "x"})
    assert taken.count == 1


async def test_json_answers_need_only_json_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    """With JSON answers an Accept of application/json alone is served, as by the SDK."""
    taken = Taken(monkeypatch)
    message = _call(1, "billing", GET)
    answers = await _compare(
        sample_app.app, {"json_response": True}, [message], Accept="application/json"
    )
    assert answers[0].status_code == 200
    assert taken.count == 1


@pytest.mark.parametrize("options", MODES)
async def test_the_official_client_in_its_default_mode_is_served_hot(
    options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The official client (2026-07-28 by default) gets its calls answered by the hot path,
    with the same results as from the SDK."""
    taken = Taken(monkeypatch)
    results = []
    with anyio.fail_after(60):
        async with both(sample_app.app, **options) as (hot, sdk, _):
            for url in (hot, sdk):
                async with Client(url) as client:
                    result = await client.call_tool("billing", GET)
                    exported = await client.call_tool("billing", {"action": "export", "rows": 2})
                    results.append((result.model_dump(), exported.model_dump()))
    assert results[0] == results[1]
    assert "INV-3" in results[0][0]["content"][0]["text"]
    assert taken.count == 2


def _paused() -> tuple[Fusion, anyio.Event]:
    """An app whose one action waits until the test lets it go."""
    app = Fusion("paused")
    go = anyio.Event()

    @app.tool("t", description="Waits.").action("hold")
    async def hold() -> str:
        """Returns once let go."""
        await go.wait()
        return "held"

    return app, go


async def test_a_silent_call_is_kept_open_with_pings_as_by_the_sdk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A handler silent past the ping interval gets an event stream opened with a ping,
    then its answer as the last event: the SDK's bytes (the interval shortened on both)."""
    monkeypatch.setattr(_streamable_http_modern, "_SSE_PING_INTERVAL", 0.05)
    monkeypatch.setattr(modern, "PING_INTERVAL", 0.05)
    taken = Taken(monkeypatch)
    message = _call(1, "t", {"action": "hold"})
    seen = []
    with anyio.fail_after(60):
        for hot_path in (True, False):
            app, go = _paused()
            async with (
                uvicorn_in_process(asgi_app(app, hot_path=hot_path)) as port,
                httpx2.AsyncClient(timeout=10) as http,
            ):
                url = f"http://127.0.0.1:{port}/mcp"
                async with http.stream("POST", url, json=message, headers=_headers(message)) as got:
                    body = b""
                    async for chunk in got.aiter_bytes():
                        body += chunk
                        if body.startswith(b": ping\r\n\r\n"):
                            go.set()  # pings may repeat until the answer: counted apart
                    seen.append((got.status_code, got.headers["content-type"], body))
    (hot_status, hot_type, hot_body), (sdk_status, sdk_type, sdk_body) = seen
    assert (hot_status, hot_type) == (sdk_status, sdk_type) == (200, "text/event-stream")
    ping = b": ping\r\n\r\n"
    assert hot_body.startswith(ping) and sdk_body.startswith(ping)
    assert hot_body.replace(ping, b"") == sdk_body.replace(ping, b"")
    assert b"held" in hot_body
    assert taken.count == 1


@pytest.mark.parametrize("hot_path", [True, False])
async def test_a_client_that_goes_away_cancels_its_call(hot_path: bool) -> None:
    """Closing the connection of a streamed 2026-07-28 call cancels its handler, as the SDK
    does (with JSON answers neither watches: the handler runs on)."""
    before = dict(sample_app.STATE)
    message = _call(1, "billing", {"action": "wait"})
    with anyio.fail_after(60):
        async with uvicorn_in_process(asgi_app(sample_app.app, hot_path=hot_path)) as port:
            url = f"http://127.0.0.1:{port}/mcp"
            async with httpx2.AsyncClient(timeout=10) as http, anyio.create_task_group() as group:

                async def post() -> None:
                    await http.post(url, json=message, headers=_headers(message))

                group.start_soon(post)
                while sample_app.STATE["started"] == before["started"]:
                    await anyio.sleep(0.01)
                group.cancel_scope.cancel()
            while sample_app.STATE["cancelled"] == before["cancelled"]:
                await anyio.sleep(0.01)
    assert sample_app.STATE["cancelled"] == before["cancelled"] + 1


@pytest.mark.parametrize("stateless", [False, True])
async def test_redis_backed_servers_are_served_hot_with_the_sdks_bytes(
    stateless: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the state shared over Redis (what --redis-url sets), 2026-07-28 calls are
    answered hot, byte for byte as the SDK answers them."""
    taken = Taken(monkeypatch)
    messages = [
        _call(1, "billing", GET),
        _call(2, "billing", {"action": "export", "rows": 2}, progressToken="p"),
    ]
    with redis_server(tmp_path / "redis") as redis:
        options = {"stateless": stateless, **shared_state(redis.url, stateless=stateless)}
        await _compare(sample_app.app, options, messages)
    assert taken.count == len(messages)
