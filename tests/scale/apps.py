"""The scale-out suite's servers: small apps for the CLI, and the billing example publishing
an invalidation on every payment.

``python -m tests.scale.apps --db PATH --redis-url URL`` serves the billing example
(stateless, port 0) wrapped so that each successful ``mark_paid`` publishes
``ResourceUpdated("billing://invoices/<id>")`` on the Redis bus: the publisher the
resources issue will put in the app itself.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import AsyncIterator, Collection, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
from mcp.server.subscriptions import ResourceUpdated, SubscriptionBus

from examples.billing import tenants
from examples.billing.server import create_app
from mcpfusion import Context, Fusion, HttpOptions, Identity, ToolResponse
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


# -- the billing example, publishing invalidations ------------------------------------------


class Publishing:
    """The billing app, publishing ``ResourceUpdated`` for every invoice a call pays."""

    def __init__(self, app: Fusion, bus: SubscriptionBus) -> None:
        self.app = app
        self.bus = bus
        self.name = app.name
        self.version = app.version
        self.instructions = app.instructions
        self.local_identity = app.local_identity

    def list_tools(self, scopes: Collection[str] | None = None) -> list[dict[str, Any]]:
        return self.app.list_tools(scopes)

    def scope_key(self, identity: Identity | None) -> frozenset[str] | None:
        return self.app.scope_key(identity)

    def running(self) -> AbstractAsyncContextManager[Any]:
        return self.app.running()

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> ToolResponse:
        response = await self.app.call_tool(name, arguments, **options)
        arguments = arguments or {}
        if name == "billing" and arguments.get("action") == "mark_paid" and not response.is_error:
            await self.bus.publish(ResourceUpdated(invoice_uri(str(arguments["invoice_id"]))))
        return response


def main(argv: list[str] | None = None) -> None:
    """Serves the publishing billing app, stateless, on a free port."""
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
    run_http(Publishing(app, bus), options)


if __name__ == "__main__":
    main()
