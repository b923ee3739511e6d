"""Attacks on the HTTP layer: header tricks, CORS, methods, slow and oversized requests."""

from __future__ import annotations

import time
from typing import Any

import anyio
import httpx2
import pytest
from anyio.abc import SocketStream

import mcpfusion._serve.http.heads
from mcpfusion import HttpOptions
from mcpfusion._serve.http.app import uvicorn_config
from tests.e2e.sample_app import app as sample
from tests.e2e.servers import uvicorn_in_process

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
CLIENT: dict[str, Any] = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"},
}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": CLIENT}


def served(**options: Any) -> Any:
    """The sample app's uvicorn configuration with these HttpOptions (quiet logs)."""
    return uvicorn_config(sample, HttpOptions(log_level="warning", **options))


async def post(port: int, headers: dict[str, str] | list[tuple[str, str]]) -> httpx2.Response:
    """POSTs an initialize request with exactly these headers."""
    async with httpx2.AsyncClient(timeout=10) as http:
        return await http.post(
            f"http://127.0.0.1:{port}/mcp",
            json=INITIALIZE,
            headers=headers if isinstance(headers, list) else {**HEADERS, **headers},
        )


async def test_host_and_origin_are_compared_exactly() -> None:
    """Prefix tricks are refused; a Host without port or in capitals, and any case of a
    media type, are accepted."""
    with anyio.fail_after(60):
        async with uvicorn_in_process(served()) as port:
            refused = {
                "127.0.0.1:evil.com": 421,
                "evil.com": 421,
                f"127.0.0.1.evil.com:{port}": 421,
                f"localhost:{port}@evil.com": 421,
            }
            for host, status in refused.items():
                assert (await post(port, {"Host": host})).status_code == status, host
            for origin in (f"http://127.0.0.1:{port}.evil.com", "null", "http://evil.com"):
                assert (await post(port, {"Origin": origin})).status_code == 403, origin
            two_origins = [*HEADERS.items(), ("Origin", f"http://localhost:{port}")] * 1
            two_origins.append(("Origin", "http://evil.com"))
            assert (await post(port, two_origins)).status_code == 403
            for host in ("localhost", f"LOCALHOST:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"):
                assert (await post(port, {"Host": host})).status_code == 200, host
            assert (await post(port, {"Origin": f"HTTP://LocalHost:{port}"})).status_code == 200
            for media in ("APPLICATION/JSON", "application/json; charset=utf-8"):
                assert (await post(port, {"Content-Type": media})).status_code == 200, media


async def test_a_post_that_is_not_json_gets_415() -> None:
    """A POST whose Content-Type is not application/json is 415 (HTTP's code for it)."""
    with anyio.fail_after(30):
        async with uvicorn_in_process(served()) as port:
            response = await post(port, {"Content-Type": "text/plain"})
    assert (response.status_code, response.text) == (415, "Content-Type must be application/json")


async def test_a_stateless_get_gets_405() -> None:
    """A stateless server has no stream to GET: 405 with Allow, not a stream that never ends."""
    with anyio.fail_after(30):
        async with (
            uvicorn_in_process(served(stateless=True)) as port,
            httpx2.AsyncClient(timeout=10) as http,
        ):
            response = await http.get(
                f"http://127.0.0.1:{port}/mcp", headers={"Accept": "text/event-stream"}
            )
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


async def test_cors_preflight_and_exposed_headers() -> None:
    """With cors_origins, a preflight is answered and the session header is exposed."""
    origin = "https://console.example"
    with anyio.fail_after(30):
        async with uvicorn_in_process(served(cors_origins=[origin])) as port:
            async with httpx2.AsyncClient(timeout=10) as http:
                preflight = await http.options(
                    f"http://127.0.0.1:{port}/mcp",
                    headers={
                        "Origin": origin,
                        "Access-Control-Request-Method": "POST",
                        "Access-Control-Request-Headers": "content-type, mcp-session-id",
                    },
                )
                refused = await http.options(
                    f"http://127.0.0.1:{port}/mcp",
                    headers={
                        "Origin": "https://evil.example",
                        "Access-Control-Request-Method": "POST",
                    },
                )
            response = await post(port, {"Origin": origin})
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == origin
    assert "POST" in preflight.headers["access-control-allow-methods"]
    assert "mcp-session-id" in preflight.headers["access-control-allow-headers"].lower()
    assert refused.status_code == 400
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == origin
    assert "mcp-session-id" in response.headers["access-control-expose-headers"].lower()
    assert response.headers["mcp-session-id"]


async def _slowloris(port: int) -> SocketStream:
    stream = await anyio.connect_tcp("127.0.0.1", port)
    await stream.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    return stream


async def _closed(stream: SocketStream) -> bool:
    """Whether the server closed the connection (reads end) within the bound."""
    try:
        with anyio.fail_after(5):
            while True:
                await stream.receive()
    except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
        return True
    except TimeoutError:
        return False


@pytest.mark.parametrize("parser", ["httptools", "h11"])
async def test_slowloris_connections_are_closed_and_calls_stay_fast(
    parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """200 connections trickling a request head do not slow a call; each is closed (with
    httptools, the default, and with h11, the fallback where httptools is missing)."""
    if parser == "h11":
        monkeypatch.setattr(mcpfusion._serve.http.heads, "_HTTPTOOLS", None)
    protocol = uvicorn_config(sample, HttpOptions()).http
    assert isinstance(protocol, type)
    expected = "_HttpToolsHeadTimeout" if parser == "httptools" else "_H11HeadTimeout"
    assert protocol.__mro__[1].__name__ == expected
    with anyio.fail_after(60):
        async with uvicorn_in_process(served(header_timeout=1.0)) as port:
            slow = [await _slowloris(port) for _ in range(200)]
            for stream in slow[:50]:
                await stream.send(b"a")  # a trickle: still no complete head
            started = time.perf_counter()
            response = await post(port, {})
            elapsed = time.perf_counter() - started
            closed = [await _closed(stream) for stream in slow]
            for stream in slow:
                await stream.aclose()
    assert response.status_code == 200
    assert elapsed < 2.0, f"a normal call took {elapsed:.2f} s beside 200 slow connections"
    assert all(closed)


async def test_a_body_that_stalls_gets_408() -> None:
    """A body that stops arriving gets 408 after body_timeout, not a task held forever."""
    with anyio.fail_after(30):
        async with uvicorn_in_process(served(body_timeout=0.5)) as port:
            stream = await anyio.connect_tcp("127.0.0.1", port)
            head = (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                'Content-Length: 100\r\n\r\n{"jsonrpc":'
            )
            await stream.send(head.encode())
            answer = b""
            try:
                while b"\r\n\r\n" not in answer:
                    answer += await stream.receive()
            finally:
                await stream.aclose()
    assert answer.startswith(b"HTTP/1.1 408 ")


async def test_sessions_are_capped_with_a_clear_503() -> None:
    """Past max_sessions a new session is refused with 503; open ones keep working."""
    with anyio.fail_after(30):
        async with uvicorn_in_process(served(max_sessions=2)) as port:
            first = await post(port, {})
            second = await post(port, {})
            third = await post(port, {})
    assert (first.status_code, second.status_code) == (200, 200)
    assert third.status_code == 503
    assert "Too many open sessions" in third.text


BAD_BODIES = {
    "not json": (b"{not json", -32700, None),
    "truncated, id 5": (b'{"jsonrpc": "2.0", "id": 5, "method": "ping"', -32700, 5),
    "10k-deep nesting, id 5": (
        b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": '
        + b"[" * 10_000
        + b"]" * 10_000
        + b"}}",
        -32700,
        5,
    ),
    "lone surrogate, id 5": (
        b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": "\\ud800"}}',
        -32700,
        5,
    ),
    "5,000-digit integer, id 5": (
        b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": ' + b"9" * 5_000 + b"}}",
        -32700,
        5,
    ),
    "NaN, id 5": (
        b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": NaN}}',
        -32700,
        5,
    ),
    "a string": (b'"hello"', -32600, None),
    "no method, id 5": (b'{"jsonrpc": "2.0", "id": 5}', -32600, 5),
    "jsonrpc 1.0, id 5": (b'{"jsonrpc": "1.0", "id": 5, "method": "ping"}', -32600, 5),
    "method 42, id 5": (b'{"jsonrpc": "2.0", "id": 5, "method": 42}', -32600, 5),
    "params a string, id 5": (
        b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": "x"}',
        -32600,
        5,
    ),
    "id null": (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600, None),
    "object id": (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', -32600, None),
    "repeated action key, id 5": (
        b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "billing", '
        b'"arguments": {"action": "get", "action": "note"}}}',
        -32600,
        5,
    ),
    "empty batch": (b"[]", -32600, None),
}


@pytest.mark.parametrize("case", BAD_BODIES.values(), ids=BAD_BODIES.keys())
async def test_a_bad_body_gets_its_json_rpc_error(case: tuple[bytes, int, Any]) -> None:
    """Each bad body gets one JSON-RPC error with its id, quoting nothing; the server stays up."""
    body, code, request_id = case
    with anyio.fail_after(60):
        async with uvicorn_in_process(served(stateless=True)) as port:
            async with httpx2.AsyncClient(timeout=10) as http:
                response = await http.post(
                    f"http://127.0.0.1:{port}/mcp", content=body, headers=HEADERS
                )
            ok = await post(port, {})
    assert response.status_code == 400
    answer = response.json()
    assert answer["id"] == request_id
    assert answer["error"]["code"] == code
    message = answer["error"]["message"]
    assert "pydantic" not in message and "hello" not in message and "99999" not in message
    assert len(message) < 200
    assert ok.status_code == 200


PING = {"jsonrpc": "2.0", "id": "p", "method": "ping"}
NOTE = {"jsonrpc": "2.0", "method": "notifications/initialized"}


async def _session(http: httpx2.AsyncClient, port: int, version: str) -> dict[str, str]:
    initialize = {**INITIALIZE, "params": {**CLIENT, "protocolVersion": version}}
    response = await http.post(f"http://127.0.0.1:{port}/mcp", json=initialize, headers=HEADERS)
    headers = {**HEADERS, "mcp-session-id": response.headers["mcp-session-id"]}
    if version != "2025-03-26":  # that version has no protocol version header
        headers["mcp-protocol-version"] = version
    await http.post(f"http://127.0.0.1:{port}/mcp", json=NOTE, headers=headers)
    return headers


async def test_batches_where_the_version_allows_them() -> None:
    """On 2025-03-26 a batch is answered as one array; later versions refuse it, per id."""
    batch = [PING, {**PING, "id": 2}, NOTE, {"jsonrpc": "2.0", "id": 3, "method": 7}]
    with anyio.fail_after(60):
        async with (
            uvicorn_in_process(served()) as port,
            httpx2.AsyncClient(timeout=10) as http,
        ):
            url = f"http://127.0.0.1:{port}/mcp"
            old = await http.post(url, json=batch, headers=await _session(http, port, "2025-03-26"))
            new = await http.post(url, json=batch, headers=await _session(http, port, "2025-11-25"))
    assert old.status_code == 200
    answers = {a["id"]: a for a in old.json()}
    assert answers["p"]["result"] == {} and answers[2]["result"] == {}
    assert answers[3]["error"]["code"] == -32600
    assert new.status_code == 400
    assert [(a["id"], a["error"]["code"]) for a in new.json()] == [
        ("p", -32600),
        (2, -32600),
        (3, -32600),
    ]


async def test_a_cancelled_request_is_not_answered() -> None:
    """MCP: a request the client cancels gets no answer; its stream ends without one."""
    call = {
        "jsonrpc": "2.0",
        "id": 41,
        "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "wait", "seconds": 60}},
    }
    cancel = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 41, "reason": "the user gave up"},
    }
    events: list[str] = []
    with anyio.fail_after(30):
        async with (
            uvicorn_in_process(served()) as port,
            httpx2.AsyncClient(timeout=20) as http,
        ):
            headers = await _session(http, port, "2025-11-25")
            url = f"http://127.0.0.1:{port}/mcp"

            async def stream_the_call() -> None:
                async with http.stream("POST", url, json=call, headers=headers) as response:
                    async for line in response.aiter_lines():
                        if line.startswith("data:"):
                            events.append(line)

            async with anyio.create_task_group() as group:
                group.start_soon(stream_the_call)
                await anyio.sleep(0.3)  # the handler is waiting by now
                accepted = await http.post(url, json=cancel, headers=headers)
            pong = await http.post(url, json=PING, headers=headers)
    assert accepted.status_code == 202
    assert not [e for e in events if '"id":41' in e.replace(" ", "")]
    assert pong.status_code == 200


async def test_a_stateless_cancellation_stops_the_call_without_an_answer() -> None:
    """Stateless, notifications/cancelled from the same verified caller cancels the request
    in flight; its stream ends with no answer and the handler is cancelled."""
    from mcpfusion import Identity
    from mcpfusion.auth import APIKeyVerifier, Auth, hash_api_key
    from tests.e2e.sample_app import STATE

    auth = Auth(
        verifier=APIKeyVerifier({hash_api_key("key-a"): Identity("a", scopes={"mcp"})}),
        resource="http://127.0.0.1/mcp",
        authorization_servers=["https://id.example.com"],
    )
    headers = {**HEADERS, "mcp-protocol-version": "2025-11-25", "authorization": "Bearer key-a"}
    call = {
        "jsonrpc": "2.0",
        "id": 8,
        "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "wait", "seconds": 20}},
    }
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8}}
    events: list[str] = []
    before = dict(STATE)
    with anyio.fail_after(30):
        async with (
            uvicorn_in_process(served(stateless=True, auth=auth)) as port,
            httpx2.AsyncClient(timeout=20) as http,
        ):
            url = f"http://127.0.0.1:{port}/mcp"

            async def stream_the_call() -> None:
                async with http.stream("POST", url, json=call, headers=headers) as response:
                    async for line in response.aiter_lines():
                        if line.startswith("data:"):
                            events.append(line)

            async with anyio.create_task_group() as group:
                group.start_soon(stream_the_call)
                while STATE["started"] == before["started"]:
                    await anyio.sleep(0.01)
                accepted = await http.post(url, json=cancel, headers=headers)
    assert accepted.status_code == 202
    assert events == []
    assert STATE["cancelled"] == before["cancelled"] + 1
    assert STATE["finished"] == before["finished"]


async def test_a_failed_initialize_keeps_no_session() -> None:
    """An initialize that fails gets no session id and holds no session slot."""
    bad = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": 5}}
    with anyio.fail_after(30):
        async with (
            uvicorn_in_process(served(max_sessions=1)) as port,
            httpx2.AsyncClient(timeout=10) as http,
        ):
            url = f"http://127.0.0.1:{port}/mcp"
            failed = [await http.post(url, json=bad, headers=HEADERS) for _ in range(3)]
            good = await post(port, {})
    assert all("mcp-session-id" not in f.headers for f in failed)
    assert all('"error"' in f.text for f in failed)
    assert good.status_code == 200 and good.headers["mcp-session-id"]
