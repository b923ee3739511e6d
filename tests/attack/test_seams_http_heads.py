"""Attacks on request heads: their size and count, Host tricks, CORS preflight, the console."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from mcpfusion import HttpOptions
from mcpfusion._dev.reload import LiveApp
from mcpfusion._dev.server import console_app
from mcpfusion._http import uvicorn_config
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


async def test_a_trailing_dot_or_a_second_host_header_is_refused() -> None:
    """ "localhost." is not a loopback name, and two Host headers name no host: both 421."""
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
