"""The scale-out suite's servers: small apps for the CLI, and the billing example over a
Redis bus.

``python -m tests.scale.apps --db PATH --redis-url URL`` serves the billing example
(stateless, port 0) on a Redis bus: each successful ``mark_paid`` invalidates
``billing.*`` (SPEC §15), which tells every replica's listen streams following an invoice.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from examples.billing import tenants
from examples.billing.server import create_app
from mcpfusion import Context, Fusion, HttpOptions
from mcpfusion.middleware import rate_limit
from mcpfusion.redis import RedisSubscriptionBus
from mcpfusion.server import run_http

LIMIT = 10.0
"""Calls a second the ``limited`` app allows each identity."""
BURST = 10
"""Its burst: a token not taken at once (a slow moment of the machine) is not lost."""


def invoice_uri(invoice_id: str) -> str:
    """The resource a payment invalidates."""
    return f"billing://invoices/{invoice_id}"


# -- apps for `mcpfusion run` ------------------------------------------------------------------

limited = Fusion("limited")
limited.middleware(rate_limit(rate=LIMIT, burst=BURST))


@limited.tool("ping", exposition="flat").action("once", read_only=True)
def ping() -> str:
    """Answers, unless the caller is over the limit."""
    return "pong"


@asynccontextmanager
async def _announced(app: Fusion) -> AsyncIterator[None]:
    print(f"lifespan started in {os.getpid()}", file=sys.stderr, flush=True)
    try:
        yield
    finally:
        print(f"lifespan stopped in {os.getpid()}", file=sys.stderr, flush=True)


slow = Fusion("slow", lifespan=_announced)


@slow.tool("work", exposition="flat").action("steps")
async def steps(ctx: Context, count: int, pause: float = 0.1) -> str:
    """Reports ``count`` progress steps ``pause`` seconds apart; answers with its pid."""
    for done in range(1, count + 1):
        await anyio.sleep(pause)
        await ctx.progress(done, count, f"step {done}")
    return f"done {count} in {os.getpid()}"


def main(argv: list[str] | None = None) -> None:
    """Serves the billing app, stateless, on a free port, on the Redis bus."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--redis-url", required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    logging.getLogger("mcpfusion").setLevel(logging.INFO)
    bus = RedisSubscriptionBus(args.redis_url)
    app = create_app(args.db)
    app.freeze()
    options = HttpOptions(
        port=0,
        stateless=True,
        auth=tenants.auth("http://127.0.0.1/mcp"),
        subscription_bus=bus,
    )
    run_http(app, options)


if __name__ == "__main__":
    main()
