"""Serves an app over stdio on mcpfusion's transport, or on the SDK's for comparison.

``python -m tests.e2e.stdio_server TARGET [--with mcpfusion|transport|sdk]``, TARGET as
for ``mcpfusion run``: ``mcpfusion`` is the transport with its hot path, ``transport``
the transport alone, ``sdk`` the SDK's own ``stdio_server``. Until ``mcpfusion.server``
serves stdio on the new transport, this is how the suite and ``benchmarks.stdio`` start it.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from mcpfusion import Fusion
from mcpfusion._serve.sdk import build_server
from mcpfusion._serve.stdio.session import serve, serve_stdio
from mcpfusion.cli import load_app


async def serve_with_sdk(app: Fusion) -> None:
    """Serves ``app`` the way ``mcpfusion run`` did before: the SDK's ``stdio_server``."""
    server = build_server(app)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_without_hot_path(app: Fusion) -> None:
    """Serves ``app`` on mcpfusion's transport, every message through the SDK."""
    await serve(build_server(app))


TRANSPORTS: dict[str, Callable[[Any], Awaitable[None]]] = {
    "mcpfusion": serve_stdio,
    "transport": serve_without_hot_path,
    "sdk": serve_with_sdk,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Loads the target and serves it until stdin closes."""
    parser = argparse.ArgumentParser(prog="python -m tests.e2e.stdio_server")
    parser.add_argument("target")
    parser.add_argument("--with", dest="transport", choices=TRANSPORTS, default="mcpfusion")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    anyio.run(serve_within_lifespan, load_app(args.target), TRANSPORTS[args.transport])
    return 0


async def serve_within_lifespan(app: Fusion, transport: Callable[[Any], Awaitable[None]]) -> None:
    """Serves ``app`` on ``transport`` inside its lifespan, as ``run_stdio`` does."""
    async with app.running():
        await transport(app)


if __name__ == "__main__":
    sys.exit(main())
