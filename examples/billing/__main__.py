"""Runs the billing example: `python -m examples.billing [--db PATH] [--http --port N]`.

Over HTTP, `--workers N` serves from N processes and `--redis-url URL` shares events, rate
limits and (stateful) resumable streams between them and other replicas.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from examples.billing import tenants
from examples.billing.db import BillingDatabaseError, default_path
from examples.billing.server import create_app
from mcpfusion import Fusion, HttpOptions
from mcpfusion.middleware import AUDIT_LOGGER
from mcpfusion.server import run_workers

HOST = "127.0.0.1"
ENV_DB = "MCPFUSION_BILLING_DB"


def database_path(flag: str | None, environ: Mapping[str, str]) -> str | Path:
    """Where the database lives: ``--db``, else ``$MCPFUSION_BILLING_DB``, else per user.

    The one place that decides it, for ``main`` and for the CLI's ``app`` factory alike.
    """
    return flag or environ.get(ENV_DB) or default_path(environ)


class JsonLines(logging.Formatter):
    """Formats an audit record as one JSON object: its time, then the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "audit", {"message": record.getMessage()})
        return json.dumps({"time": round(record.created, 3), **fields}, default=str)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m examples.billing",
        description="The mcpfusion billing example: an MCP server over a seeded SQLite file.",
    )
    parser.add_argument(
        "--db",
        metavar="PATH",
        help=f"database file, created and seeded if missing (default: ${ENV_DB}, "
        f"else {default_path(os.environ)})",
    )
    parser.add_argument(
        "--http", action="store_true", help=f"serve streamable HTTP on {HOST} at /mcp"
    )
    parser.add_argument(
        "--port", type=int, default=8000, help="HTTP port (default: 8000; 0 picks a free one)"
    )
    parser.add_argument(
        "--resource",
        metavar="URL",
        help="the endpoint's public URL, named in its OAuth metadata "
        "(default: http://127.0.0.1:PORT/mcp)",
    )
    parser.add_argument(
        "--audit-log",
        metavar="PATH",
        help="append one JSON line per call to PATH (default: a line per call on stderr)",
    )
    parser.add_argument(
        "--stateless",
        action="store_true",
        help="HTTP without sessions, for several workers behind a load balancer",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="HTTP server processes (default 1; more than one wants --stateless)",
    )
    parser.add_argument(
        "--redis-url",
        metavar="URL",
        help="share events, rate limits and resumable streams through Redis",
    )
    parser.add_argument(
        "--review-payments",
        action="store_true",
        help="a payment needs a review first (billing.review, then mark_paid): a workflow",
    )
    parser.add_argument(
        "--shutdown-timeout",
        type=float,
        default=HttpOptions().shutdown_timeout,
        metavar="SECONDS",
        help="on SIGTERM, how long calls in flight may take to finish",
    )
    return parser


def http_options(args: argparse.Namespace) -> HttpOptions:
    """The HTTP options the command line asks for."""
    resource = args.resource or f"http://{HOST}:{args.port}/mcp"
    shared: dict[str, Any] = {}
    if args.redis_url:
        from mcpfusion.redis import shared_state

        shared = shared_state(args.redis_url, stateless=args.stateless)
    return HttpOptions(
        host=HOST,
        port=args.port,
        stateless=args.stateless,
        auth=tenants.auth(resource),
        workers=args.workers,
        shutdown_timeout=args.shutdown_timeout,
        **shared,
    )


def app() -> Fusion:
    """The app over the default database, for the CLI's ``examples.billing.__main__:app``.

    The database opens when the app starts serving (its lifespan), which raises
    ``BillingDatabaseError`` if it cannot be opened or seeded.
    """
    return create_app(database_path(None, os.environ))


def main(argv: Sequence[str] | None = None) -> int:
    """Parses the command line, opens (or seeds) the database and serves until stopped."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.http and (args.stateless or args.workers != 1 or args.redis_url):
        parser.error("--stateless, --workers and --redis-url apply to --http only")
    # The environment is read here, in the entry point, and nowhere in the library.
    path = database_path(args.db, os.environ)
    served = create_app(path, review_payments=args.review_payments)
    # Logs go to stderr (on stdio, stdout is the protocol); over HTTP the mcpfusion logger
    # announces the endpoint, which is how `--port 0` tells its caller the port it got.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    logging.getLogger("mcpfusion").setLevel(logging.INFO)
    if args.audit_log:
        audit = logging.getLogger(AUDIT_LOGGER)
        handler = logging.FileHandler(args.audit_log, encoding="utf-8")
        handler.setFormatter(JsonLines())
        audit.addHandler(handler)
        audit.propagate = False
    try:
        if args.http and args.workers > 1:
            # Each worker builds the app itself: create_app is importable there.
            build = functools.partial(create_app, path, review_payments=args.review_payments)
            run_workers(build, http_options(args))
        elif args.http:
            served.run("http", http_options(args))
        else:
            served.run()
    except BillingDatabaseError as exc:
        print(f"billing: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
