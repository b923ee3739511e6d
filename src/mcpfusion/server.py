"""Serving an app through the official MCP SDK: stdio, streamable HTTP, or an ASGI app.

``Fusion.run`` and ``Fusion.asgi_app`` are the usual way in; this module is for embedding:
``build_server(app)`` is the SDK ``Server`` answering from the app, to combine with
hand-written SDK handlers or run on a transport of your own; ``run_workers`` serves an
app in several processes.
"""

from __future__ import annotations

import contextlib

import anyio

from mcpfusion._app.lifespan import until_signalled
from mcpfusion._serve.http.app import asgi_app, host_policy, is_loopback, run_http
from mcpfusion._serve.http.hosts import HostPolicy
from mcpfusion._serve.http.streams import InMemoryEventStore
from mcpfusion._serve.http.workers import AppFactory, run_workers
from mcpfusion._serve.options import HttpOptions
from mcpfusion._serve.sdk import ServableApp, build_server, to_call_tool_result
from mcpfusion._serve.stdio.session import serve_stdio

__all__ = [
    "AppFactory",
    "HostPolicy",
    "HttpOptions",
    "InMemoryEventStore",
    "ServableApp",
    "asgi_app",
    "build_server",
    "host_policy",
    "is_loopback",
    "run_http",
    "run_stdio",
    "run_workers",
    "serve_stdio",
    "to_call_tool_result",
]


def run_stdio(app: ServableApp) -> None:
    """Serves ``app`` over stdio, blocking until the client closes the stream.

    The app's lifespan runs around serving, and shuts down when the stream closes or the
    process gets SIGTERM or SIGINT.
    """
    anyio.run(_run_stdio, app)


async def _run_stdio(app: ServableApp) -> None:
    async with contextlib.AsyncExitStack() as lifespan:
        failed: list[Exception] = []

        async def serve() -> None:
            try:
                await lifespan.enter_async_context(app.running())
            except Exception as exc:  # raised as itself below, not in a task group's group
                failed.append(exc)
                return
            await serve_stdio(app)

        # Signals are received before the lifespan starts: one that comes while it starts
        # stops it too, where it used to kill the process with its shutdown never run.
        await until_signalled(serve, on_stuck=lifespan.aclose)
        if failed:
            raise failed[0]
