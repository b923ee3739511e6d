"""Attacks on request heads: their size and count, Host tricks, CORS preflight, the console."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

import mcpfusion._serve.http.heads
from mcpfusion import HttpOptions
from mcpfusion._dev.reload import LiveApp
from mcpfusion._dev.server import console_app
from mcpfusion._serve.http.app import uvicorn_config
from tests.e2e.sample_app import app as sample
from tests.e2e.servers import uvicorn_in_process

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

CONSOLE_SAMPLE = Path(__file__).parents[1] / "browser" / "sample_app.py"
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}'
)


def served(**options: Any) -> Any:
    """The sample app's uvicorn configuration with these HttpOptions (quiet logs)."""
    return uvicorn_config(sample, HttpOptions(log_level="warning", **options))


async def exchange(port: int, request: bytes) -> bytes:
    """Sends raw bytes on a new connection; the response head the server answers with."""
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        await stream.send(request)
        answer = b""
        try:
            while b"\r\n\r\n" not in answer:
                answer += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            pass
    return answer


def post_head(port: int, *lines: str, length: int = len(INITIALIZE)) -> bytes:
    """An initialize POST's head with these extra header lines."""
    head = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        *(f"{k}: {v}" for k, v in HEADERS.items()),
        f"Content-Length: {length}",
        *lines,
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode()


PARSERS = pytest.mark.parametrize("parser", ["httptools", "h11"])
BASE_FIELDS = 4
"""The fields of ``post_head`` without extra lines: Host, Accept, Content-Type, Content-Length."""


def use(parser: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Serves with httptools (the default) or h11 (the fallback where it is missing)."""
    if parser == "h11":
        monkeypatch.setattr(mcpfusion._serve.http.heads, "_HTTPTOOLS", None)


@PARSERS
async def test_a_head_with_too_many_fields_gets_431(
    parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A head with more than max_headers fields (default 100) is 431; 100 are served."""
    use(parser, monkeypatch)
    assert HttpOptions().max_headers == 100
    many = [f"X-Filler-{i}: {i}" for i in range(100 - BASE_FIELDS)]
    with anyio.fail_after(60):
        async with uvicorn_in_process(served()) as port:
            ok = await exchange(port, post_head(port, *many) + INITIALIZE)
            refused = await exchange(port, post_head(port, *many, "X-One-More: 1") + INITIALIZE)
    assert ok.startswith(b"HTTP/1.1 200 ")
    assert refused.startswith(b"HTTP/1.1 431 ")


@PARSERS
async def test_a_head_over_max_head_bytes_gets_431(
    parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole head over max_head_bytes (default 64 KiB) is 431, one field or many; one
    under it is served, even with a larger body in the same bytes."""
    use(parser, monkeypatch)
    assert HttpOptions().max_head_bytes == 64 * 1024
    with anyio.fail_after(60):
        async with uvicorn_in_process(served(max_head_bytes=8192)) as port:
            under = await exchange(port, post_head(port, "X-Big: " + "a" * 6000) + INITIALIZE)
            one = await exchange(port, post_head(port, "X-Big: " + "a" * 9000) + INITIALIZE)
            fields = [f"X-Part-{i}: " + "a" * 1000 for i in range(9)]
            many = await exchange(port, post_head(port, *fields) + INITIALIZE)
            # A small head whose large body arrives in the same bytes is no large head.
            padded = INITIALIZE[:-1] + b" " * 20_000 + b"}"
            with_body = await exchange(port, post_head(port, length=len(padded)) + padded)
    assert under.startswith(b"HTTP/1.1 200 ")
    assert with_body.startswith(b"HTTP/1.1 200 "), with_body[:100]
    assert one.startswith(b"HTTP/1.1 431 "), one[:100]
    assert many.startswith(b"HTTP/1.1 431 "), many[:100]


async def until_closed(stream: Any, answer: bytes = b"") -> bytes:
    """Everything the server sends until it closes the connection."""
    try:
        while True:
            answer += await stream.receive()
    except (anyio.EndOfStream, anyio.BrokenResourceError):
        return answer


@PARSERS
async def test_a_later_head_on_the_same_connection_is_bounded_too(
    parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a request on a kept-alive connection, and pipelined behind one (in bytes that
    begin inside its body), an oversized head is still 431."""
    use(parser, monkeypatch)
    big = "X-Big: " + "a" * 9000
    with anyio.fail_after(60):
        async with uvicorn_in_process(served(max_head_bytes=8192)) as port:
            async with await anyio.connect_tcp("127.0.0.1", port) as stream:
                await stream.send(post_head(port) + INITIALIZE)
                first = b""
                while not first.endswith(b"0\r\n\r\n"):  # the chunked answer's end
                    first += await stream.receive()
                await stream.send(post_head(port, big) + INITIALIZE)
                kept_alive = await until_closed(stream)
            async with await anyio.connect_tcp("127.0.0.1", port) as stream:
                # The server asks for the body once it reads its head: the body and the
                # next head then arrive in bytes that begin inside a body.
                await stream.send(post_head(port, "Expect: 100-continue"))
                asked = b""
                while b"\r\n\r\n" not in asked:
                    asked += await stream.receive()
                await stream.send(INITIALIZE + post_head(port, big) + INITIALIZE)
                pipelined = await until_closed(stream)
    assert first.startswith(b"HTTP/1.1 200 ")
    assert kept_alive.startswith(b"HTTP/1.1 431 "), kept_alive[:100]
    assert asked.startswith(b"HTTP/1.1 100 ")
    # Like any bad pipelined request in uvicorn, it ends the connection at once.
    assert b"HTTP/1.1 431 " in pipelined


@PARSERS
async def test_a_head_that_never_ends_is_cut_off(
    parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A header that keeps growing is not buffered: the connection is closed long before
    the 16 MiB sent (the head timeout, set long here, has nothing to do with it)."""
    use(parser, monkeypatch)
    chunk = b"a" * 65536
    sent = 0
    with anyio.fail_after(60):
        async with uvicorn_in_process(served(header_timeout=600)) as port:
            stream = await anyio.connect_tcp("127.0.0.1", port)
            try:
                await stream.send(
                    f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Big: ".encode()
                )
                while sent < 16 * 1024 * 1024:
                    await stream.send(chunk)
                    sent += len(chunk)
            except (anyio.BrokenResourceError, OSError):
                pass
            finally:
                await stream.aclose()
    assert sent < 16 * 1024 * 1024


async def test_a_body_that_trickles_gets_408_while_it_trickles() -> None:
    """body_timeout bounds the whole body: one arriving a byte at a time, never pausing
    long, gets 408 while it is still arriving."""
    answer = b""
    trickled = 0
    with anyio.fail_after(60):
        async with (
            uvicorn_in_process(served(body_timeout=1.0)) as port,
            await anyio.connect_tcp("127.0.0.1", port) as stream,
        ):
            await stream.send(post_head(port, length=1000))

            async def trickle() -> None:
                nonlocal trickled
                while trickled < 400:  # of the 1,000 bytes announced
                    await stream.send(b" ")
                    trickled += 1
                    await anyio.sleep(0.05)

            async with anyio.create_task_group() as group:
                group.start_soon(trickle)
                while b"\r\n\r\n" not in answer:
                    answer += await stream.receive()
                group.cancel_scope.cancel()
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert trickled < 400


async def test_a_trailing_dot_or_a_second_host_header_is_refused() -> None:
    """Host localhost. is not a loopback name, and two Host headers name no host: both 421."""
    with anyio.fail_after(60):
        async with uvicorn_in_process(served()) as port:
            async with httpx2.AsyncClient(timeout=10) as http:
                dotted = await http.post(
                    f"http://127.0.0.1:{port}/mcp",
                    content=INITIALIZE,
                    headers={**HEADERS, "Host": f"localhost.:{port}"},
                )
            second = f"Host: evil.example:{port}"
            twice = await exchange(port, post_head(port, second) + INITIALIZE)
            once = await exchange(port, post_head(port) + INITIALIZE)
    assert dotted.status_code == 421
    assert twice.startswith(b"HTTP/1.1 421 ")
    assert once.startswith(b"HTTP/1.1 200 ")


async def test_cors_preflight_allows_the_2026_headers() -> None:
    """A 2026-07-28 browser client's preflight (Mcp-Method, Mcp-Name, Mcp-Param-*) is allowed;
    WWW-Authenticate is exposed; other headers are still refused."""
    origin = "https://console.example"
    requested = "content-type, mcp-protocol-version, Mcp-Method, mcp-name, Mcp-Param-Region"
    with anyio.fail_after(60):
        async with (
            uvicorn_in_process(served(cors_origins=[origin])) as port,
            httpx2.AsyncClient(timeout=10) as http,
        ):
            url = f"http://127.0.0.1:{port}/mcp"
            preflight = {"Origin": origin, "Access-Control-Request-Method": "POST"}
            allowed = await http.options(
                url, headers={**preflight, "Access-Control-Request-Headers": requested}
            )
            params_only = await http.options(
                url, headers={**preflight, "Access-Control-Request-Headers": "mcp-param-a"}
            )
            refused = await http.options(
                url, headers={**preflight, "Access-Control-Request-Headers": "mcp-param-a, x-evil"}
            )
            response = await http.post(
                url, content=INITIALIZE, headers={**HEADERS, "Origin": origin}
            )
    assert allowed.status_code == 200, allowed.text
    listed = {h.strip() for h in allowed.headers["access-control-allow-headers"].split(",")}
    assert {"mcp-method", "mcp-name", "mcp-param-region", "mcp-protocol-version"} <= {
        h.lower() for h in listed
    }
    assert params_only.status_code == 200
    assert "mcp-param-a" in params_only.headers["access-control-allow-headers"]
    assert refused.status_code == 400
    exposed = response.headers["access-control-expose-headers"].lower()
    assert {"mcp-session-id", "mcp-protocol-version", "www-authenticate"} <= {
        h.strip() for h in exposed.split(",")
    }


async def test_the_console_refuses_a_cross_site_post() -> None:
    """A page elsewhere posting text/plain (no preflight) or JSON from its origin to the
    console's /api/call with a leaked token is refused; the console's own call runs."""
    token = "leaked-token"
    call = b'{"tool": "orders", "action": "list_orders", "values": {}}'
    app = console_app(LiveApp(f"{CONSOLE_SAMPLE}:app"), token)
    with anyio.fail_after(60):
        async with uvicorn_in_process(app) as port, httpx2.AsyncClient(timeout=10) as http:
            url = f"http://127.0.0.1:{port}/api/call?token={token}"
            own = f"http://127.0.0.1:{port}"
            plain = await http.post(
                url, content=call, headers={"Content-Type": "text/plain", "Origin": own}
            )
            foreign = await http.post(
                url,
                content=call,
                headers={"Content-Type": "application/json", "Origin": "https://evil.example"},
            )
            allowed = await http.post(
                url, content=call, headers={"Content-Type": "application/json", "Origin": own}
            )
    assert plain.status_code == 415
    assert foreign.status_code == 403
    assert allowed.status_code == 200
    assert "event: result" in allowed.text
