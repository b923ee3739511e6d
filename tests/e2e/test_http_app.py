"""The ASGI app's options under uvicorn: DNS-rebinding protection, paths, JSON responses."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, types

from mcpfusion import Context, Fusion
from mcpfusion.server import asgi_app
from tests.client_results import first_text, texts
from tests.e2e.servers import http_server, uvicorn_in_process

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def post(port: int, path: str = "/mcp", **headers: str) -> httpx2.Response:
    """POSTs an initialize request with extra headers; returns the response unread."""
    async with httpx2.AsyncClient(timeout=10) as http:
        return await http.post(
            f"http://127.0.0.1:{port}{path}", json=INITIALIZE, headers={**HEADERS, **headers}
        )


async def test_loopback_rejects_foreign_host_and_origin(app: Any) -> None:
    """Bound to loopback, a foreign Host gets 421 and a foreign Origin 403; loopback passes."""
    with anyio.fail_after(30):
        async with uvicorn_in_process(asgi_app(app)) as port:
            assert (await post(port, host="evil.example")).status_code == 421
            assert (await post(port, origin="http://evil.example")).status_code == 403
            ok = await post(port, origin=f"http://localhost:{port}")
            assert ok.status_code == 200


async def test_public_bind_leaves_host_checks_to_the_proxy(app: Any) -> None:
    """Bound to all interfaces without allowed_hosts, any Host header is served."""
    with anyio.fail_after(30):
        async with uvicorn_in_process(asgi_app(app, host="0.0.0.0")) as port:
            assert (await post(port, host="api.example.com")).status_code == 200


async def test_allowed_hosts_switch_protection_on(app: Any) -> None:
    """Explicit allowed_hosts are the only Host values (and their origins) accepted."""
    asgi = asgi_app(app, host="0.0.0.0", allowed_hosts=["api.example.com"])
    with anyio.fail_after(30):
        async with uvicorn_in_process(asgi) as port:
            assert (await post(port, host="api.example.com")).status_code == 200
            assert (await post(port, host=f"127.0.0.1:{port}")).status_code == 421
            https = await post(port, host="api.example.com", origin="https://api.example.com")
            assert https.status_code == 200


async def test_custom_path_without_redirect(app: Any) -> None:
    """The endpoint answers at its exact path, with no redirect; other paths are 404."""
    with anyio.fail_after(30):
        async with uvicorn_in_process(asgi_app(app, path="/custom/mcp")) as port:
            assert (await post(port, "/custom/mcp")).status_code == 200
            assert (await post(port, "/mcp")).status_code == 404


@pytest.mark.parametrize("stateless", [False, True])
async def test_json_response_mode_serves_calls(app: Any, stateless: bool) -> None:
    """With JSON responses the results are whole; progress is not delivered (no stream)."""
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    asgi = asgi_app(app, json_response=True, stateless=stateless)
    arguments = {"action": "get", "invoice_id": "INV-3"}
    with anyio.fail_after(30):
        async with (
            uvicorn_in_process(asgi) as port,
            Client(f"http://127.0.0.1:{port}/mcp") as client,
        ):
            result = await client.call_tool("billing", arguments)
            exported = await client.call_tool(
                "billing", {"action": "export", "rows": 2}, progress_callback=on_progress
            )
    expected = (await app.call_tool("billing", arguments)).to_mcp()
    assert texts(result.content) == [c["text"] for c in expected["content"]]
    assert first_text(exported) == "exported 2 rows"
    assert seen == []


async def test_any_loopback_bind_accepts_its_own_address(app: Any) -> None:
    """Bound to 127.0.1.1, that address is an accepted Host; foreign hosts still get 421."""
    with anyio.fail_after(30):
        async with uvicorn_in_process(asgi_app(app, host="127.0.1.1")) as port:
            assert (await post(port, host=f"127.0.1.1:{port}")).status_code == 200
            assert (await post(port, host="evil.example")).status_code == 421


async def test_cli_allowed_host_switches_protection_on() -> None:
    """``mcpfusion run --http --allowed-host NAME`` serves that Host and refuses others."""
    with anyio.fail_after(30):
        async with http_server("--allowed-host", "api.example.com:*") as url:
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            assert (await post(port, host=f"api.example.com:{port}")).status_code == 200
            assert (await post(port, host=f"127.0.0.1:{port}")).status_code == 421


def _polling_app() -> Fusion:
    """A tool that closes its SSE stream mid-call and goes on (SEP-1699 polling)."""
    app = Fusion("polling", data_format="json", ui_audience="all", definitions="full")

    @app.tool("poll").action(read_only=True)
    async def run(ctx: Context) -> str:
        """Logs, closes its stream, logs again."""
        await ctx.log("info", "before")
        closed = await ctx.close_sse_stream()
        await anyio.sleep(0.2)
        await ctx.log("info", "after")
        return f"closed={closed}"

    return app


@pytest.mark.parametrize("resumable", [True, False])
async def test_a_closed_stream_resumes_and_loses_nothing(resumable: bool) -> None:
    """With resumable=True a handler's closed stream is resumed by the client (Last-Event-ID)
    and every message arrives; without, closing is a no-op that says so."""
    heard: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        heard.append(params.data)

    asgi = asgi_app(_polling_app(), resumable=resumable, sse_retry=0.1)
    with anyio.fail_after(30):
        async with (
            uvicorn_in_process(asgi) as port,
            Client(f"http://127.0.0.1:{port}/mcp", mode="legacy", logging_callback=on_log) as c,
        ):
            result = await c.call_tool("poll", {"action": "run"})
    assert first_text(result) == f"closed={resumable}"
    assert heard == ["before", "after"]


async def test_resumable_streams_send_a_priming_event_with_the_retry_interval() -> None:
    """A resumable stateful server opens each POST stream with an event id and retry."""
    asgi = asgi_app(_polling_app(), resumable=True, sse_retry=0.25)
    with anyio.fail_after(30):
        async with uvicorn_in_process(asgi) as port:
            response = await post(port)
    assert response.status_code == 200
    assert "retry: 250" in response.text.replace("\r\n", "\n")
