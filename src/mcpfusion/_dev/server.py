"""The console's web app: its page, the renderer, the tool list and calls streamed as events."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import secrets
import socket
import sys
import time
import webbrowser
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpfusion._app.app import Fusion
from mcpfusion._dev.forms import action_forms, form_arguments
from mcpfusion._dev.reload import LiveApp
from mcpfusion._dev.target import UsageError
from mcpfusion._dev.terminal import TokenCounter, classify, definition_json
from mcpfusion._present.response import ToolResponse
from mcpfusion._renderer import renderer_document
from mcpfusion._serve.http.hosts import Address, Origin, _is_json
from mcpfusion._tools.catalog import Catalog

logger = logging.getLogger("mcpfusion.dev")

HERE: Final = Path(__file__).resolve().parent
TOKEN_HEADER: Final = "x-mcpfusion-token"
LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "[::1]"})

_SECURITY_HEADERS: Final = {
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


class TokenGuard:
    """Answers 403 unless a request names a loopback host and carries the console's token.

    The token comes in the ``token`` query parameter (page and renderer URLs) or the
    ``X-Mcpfusion-Token`` header (the page's API calls), so other pages open in the same
    browser cannot call tools; the Host check stops DNS-rebinding.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._allowed(scope):
            await PlainTextResponse("forbidden", status_code=403)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        hostname = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if hostname not in LOOPBACK_HOSTS:
            return False
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = headers.get(TOKEN_HEADER) or (query.get("token") or [""])[0]
        return secrets.compare_digest(given.encode(), self.token.encode())


def _script_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def console_page() -> tuple[str, str]:
    """The console's HTML and the Content-Security-Policy it is served with."""
    script = (HERE / "console.js").read_text(encoding="utf-8")
    css = (HERE / "console.css").read_text(encoding="utf-8")
    html = (HERE / "console.html").read_text(encoding="utf-8")
    page = html.replace("/*CSS*/", css).replace("/*JS*/", script)
    policy = "; ".join(
        [
            "default-src 'none'",
            f"script-src {_script_hash(script)}",
            "style-src 'unsafe-inline'",
            "connect-src 'self'",
            "frame-src 'self'",
            "img-src data:",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        ]
    )
    return page, policy


def full_definitions(app: Fusion) -> dict[str, dict[str, Any]]:
    """Each listed tool's definition in full, by name: what the forms are read from.

    A lean definition (``definitions="lean"``) leaves which actions use a parameter to the
    description's ``Requires:`` lists, which cannot tell "every action" from "the actions
    requiring it"; the full one names them ("Used by:").
    """
    return {tool["name"]: tool for tool in Catalog.build(app.tools.values()).list_tools()}


def tool_listing(live: LiveApp, counter: TokenCounter) -> dict[str, Any]:
    """The app's tools with their token cost (as listed) and forms, for the page."""
    app = live.app
    tools = []
    total = 0
    full = full_definitions(app)
    for tool in app.list_tools():
        tokens = counter.count(definition_json(tool))
        total += tokens
        tools.append(
            {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "tokens": tokens,
                "definition": tool,
                "forms": [form.to_json() for form in action_forms(full[tool["name"]])],
            }
        )
    return {
        "app": {"name": app.name, "version": app.version, "instructions": app.instructions},
        "version": live.version,
        "error": live.error,
        "tools": tools,
        "total_tokens": total,
    }


def labelled_blocks(response: ToolResponse, counter: TokenCounter) -> list[dict[str, Any]]:
    """Each block as the model reads it, with the CLI's kind, label and token count."""
    return [
        {"kind": kind, "label": label, "tokens": counter.count(text), "text": text}
        for kind, label, text in classify(response)
    ]


def _event(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


class CallStream(Response):
    """Runs one tool call and streams it as server-sent events.

    ``progress`` events carry ``{done, total, message}``; the last event is ``result``
    (the MCP result, its labelled blocks and token counts) or ``failure``. The call is
    cancelled if the browser goes away.
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        call: Callable[
            [Callable[[float, float | None, str | None], Awaitable[None]]], Awaitable[ToolResponse]
        ],
        counter: TokenCounter,
        arguments: Mapping[str, Any],
    ) -> None:
        # No content-length: the body is written as the call goes.
        self.status_code = 200
        self.background = None
        self.raw_headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            *((k.lower().encode(), v.encode()) for k, v in _SECURITY_HEADERS.items()),
        ]
        self._call = call
        self._counter = counter
        self._arguments = arguments

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})

        async def emit(name: str, data: Any) -> None:
            await send(
                {"type": "http.response.body", "body": _event(name, data), "more_body": True}
            )

        async def progress(done: float, total: float | None, message: str | None) -> None:
            await emit("progress", {"done": done, "total": total, "message": message})

        async def until_disconnect(scope: anyio.CancelScope) -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            scope.cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(until_disconnect, group.cancel_scope)
            started = time.perf_counter()
            try:
                response = await self._call(progress)
            except Exception as exc:
                # call_tool turns every failure the model should read into a result; what
                # escapes is a framework defect, logged in full and named on the page.
                logger.exception("the call failed")
                await emit("failure", {"message": f"{type(exc).__name__}: {exc}"})
            else:
                blocks = labelled_blocks(response, self._counter)
                await emit(
                    "result",
                    {
                        "result": response.to_mcp(),
                        "arguments": self._arguments,
                        "blocks": blocks,
                        "total_tokens": sum(b["tokens"] for b in blocks),
                        "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
                    },
                )
            group.cancel_scope.cancel()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _cross_site(request: Request) -> Response | None:
    """The refusal of a POST another page could have sent, or ``None`` for the console's own.

    The token is in the page's URL, so it may leak (history, a shared screen); a page of
    another origin can still not make the browser post JSON here: a cross-origin
    ``application/json`` POST needs a preflight the console never answers, and one whose
    ``Origin`` (sent with every browser POST) is not the console's own is refused.
    """
    origins = request.headers.getlist("origin")
    if origins:
        origin = Origin.parse(origins[0]) if len(origins) == 1 else None
        address = Address.parse(request.headers.get("host", ""))
        own = Origin("http", address) if address is not None else None
        if origin is None or own is None or not origin.matches(own):
            return JSONResponse(
                {"error": "cross-origin request refused"},
                status_code=403,
                headers=_SECURITY_HEADERS,
            )
    if not _is_json(request.headers.getlist("content-type")):
        return JSONResponse(
            {"error": "Content-Type must be application/json"},
            status_code=415,
            headers=_SECURITY_HEADERS,
        )
    return None


def console_app(live: LiveApp, token: str, *, counter: TokenCounter | None = None) -> ASGIApp:
    """The console as an ASGI app over ``live``, guarded by ``token``."""
    counter = counter or TokenCounter()
    page, policy = console_page()
    renderer_policy = "frame-ancestors 'self'"

    async def index(request: Request) -> Response:
        return HTMLResponse(page, headers={**_SECURITY_HEADERS, "Content-Security-Policy": policy})

    async def renderer(request: Request) -> Response:
        return HTMLResponse(
            renderer_document(),
            headers={**_SECURITY_HEADERS, "Content-Security-Policy": renderer_policy},
        )

    async def tools(request: Request) -> Response:
        try:
            listing = tool_listing(live, counter)
        except Exception as exc:
            # A tool the reloaded app defines wrongly: shown on the page, not a crash.
            return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=500)
        return JSONResponse(listing, headers=_SECURITY_HEADERS)

    async def status(request: Request) -> Response:
        return JSONResponse(
            {"version": live.version, "error": live.error}, headers=_SECURITY_HEADERS
        )

    async def call(request: Request) -> Response:
        refusal = _cross_site(request)
        if refusal is not None:
            return refusal
        try:
            body = await request.json()
            name, action, values = body["tool"], body.get("action"), body.get("values") or {}
            definitions = full_definitions(live.app)
            if name not in definitions:
                raise UsageError(f"unknown tool '{name}'")
            arguments = form_arguments(definitions[name], action, values)
        except (ValueError, KeyError, TypeError, UsageError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400, headers=_SECURITY_HEADERS)
        app = live.app

        async def run(
            progress: Callable[[float, float | None, str | None], Awaitable[None]],
        ) -> ToolResponse:
            # As the process owner (the app's local identity), inside the app's lifespan
            # (started for the call unless something else keeps it running).
            async with app.running():
                return await app.call_tool(
                    name, arguments, progress=progress, identity=app.local_identity
                )

        return CallStream(run, counter, arguments)

    routes = [
        Route("/", index),
        Route("/renderer", renderer),
        Route("/api/tools", tools),
        Route("/api/status", status),
        Route("/api/call", call, methods=["POST"]),
    ]
    return TokenGuard(Starlette(routes=routes), token)


def serve(live: LiveApp, sock: socket.socket, token: str, *, poll: float) -> None:
    """Serves the console on ``sock`` until interrupted, reloading every ``poll`` seconds."""
    anyio.run(_serve, live, sock, token, poll)


async def _serve(live: LiveApp, sock: socket.socket, token: str, poll: float) -> None:
    config = uvicorn.Config(
        console_app(live, token),
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as group:
        if poll > 0:
            group.start_soon(live.watch, poll)
        await server.serve([sock])
        group.cancel_scope.cancel()


def _listen(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        # Listening before the URL is printed: a browser that is quick queues, not fails.
        sock.listen(64)
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def run_console(target: str, *, host: str, port: int, poll: float, browse: bool) -> int:
    """Loads ``target``, prints the console's URL and serves it until interrupted.

    Raises:
        UsageError: the target cannot be loaded or the port is taken.
        DefinitionError: a tool of the app is defined wrongly.
    """
    live = LiveApp(target)
    live.app.list_tools()  # a definition mistake stops the console before it starts
    sock = _listen(host, port)
    try:
        token = secrets.token_urlsafe(24)
        url = f"http://{host}:{sock.getsockname()[1]}/?token={token}"
        print(f"mcpfusion dev: '{live.app.name}' at {url}", file=sys.stderr, flush=True)
        if browse:
            webbrowser.open(url)
        serve(live, sock, token, poll=poll)
    finally:
        sock.close()
    return 0
