"""The ``mcpfusion run`` subcommand: its flags, and serving the app over stdio or HTTP."""

from __future__ import annotations

import argparse
import functools
import logging
from typing import Any

from mcpfusion._app.app import Fusion
from mcpfusion._dev.run_options import STATE_KEY_VARIABLE, http_options
from mcpfusion._dev.target import UsageError, load_app
from mcpfusion._serve.options import HttpOptions

logger = logging.getLogger("mcpfusion")


def _run(args: argparse.Namespace) -> int:
    if not args.http and (
        args.workers != 1 or args.redis_url or args.request_state_keys or args.task_queue
    ):
        raise UsageError(
            "--workers, --redis-url, --request-state-key and --task-queue apply to --http only"
        )
    app = _served(args.target, args.page_size)
    if not args.http:
        app.run()
        return 0
    try:
        options = http_options(args)
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    if options.workers == 1:
        app.run("http", options)
        return 0
    if not options.stateless:
        logger.warning(
            "%d workers serving stateful sessions: a session's requests must reach the "
            "process that opened it (use --stateless, or one worker per replica behind "
            "sticky routing)",
            options.workers,
        )
    from mcpfusion._serve.http.workers import run_workers

    run_workers(functools.partial(_served, args.target, args.page_size), options)
    return 0


def _served(target: str, page_size: int | None) -> Fusion:
    """The app ``target`` names, with the list page size ``--page-size`` asks for."""
    app = load_app(target)
    if page_size is not None:
        app.page_size = page_size
    return app


def _positive(text: str) -> int:
    """A flag's value that is a positive int (``argparse`` reports the ``ValueError``)."""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def add_run_command(commands: Any) -> None:
    """The ``run`` subcommand."""
    run = commands.add_parser("run", help="serve the app over stdio (default) or HTTP")
    run.add_argument("target", metavar="TARGET")
    run.add_argument("--http", action="store_true", help="serve streamable HTTP, not stdio")
    run.add_argument(
        "--host",
        default="127.0.0.1",
        help="HTTP bind address (127.0.0.1); loopback turns DNS-rebinding protection on",
    )
    run.add_argument("--port", type=int, default=8000, help="HTTP port; 0 picks one (8000)")
    run.add_argument("--path", default="/mcp", help="HTTP endpoint path (/mcp)")
    run.add_argument("--stateless", action="store_true", help="no sessions (load balancers)")
    run.add_argument(
        "--json-response", action="store_true", help="JSON bodies, not SSE (drops progress)"
    )
    run.add_argument(
        "--resumable",
        action="store_true",
        help="keep SSE events in memory so a dropped stream resumes (Last-Event-ID); stateful only",
    )
    run.add_argument(
        "--no-hot-path",
        action="store_true",
        help="the SDK answers every request (no JSON answer to a quiet tools/call)",
    )
    run.add_argument(
        "--allowed-host",
        action="append",
        dest="allowed_hosts",
        metavar="HOST",
        help="a Host header to accept ('name:*' for any port); repeatable; switches "
        "DNS-rebinding protection on for any bind address",
    )
    run.add_argument(
        "--allowed-origin",
        action="append",
        dest="allowed_origins",
        metavar="ORIGIN",
        help="an Origin header to accept; repeatable (default: http:// and https:// on "
        "each allowed host)",
    )
    run.add_argument(
        "--cors-origin",
        action="append",
        dest="cors_origins",
        default=[],
        metavar="ORIGIN",
        help="a browser client's origin allowed across origins (CORS); repeatable",
    )
    run.add_argument(
        "--access-log",
        action=argparse.BooleanOptionalAction,
        default=HttpOptions().access_log,
        help="log a line per HTTP request (default: off; the audit_log middleware records "
        "each call)",
    )
    run.add_argument(
        "--max-sessions",
        type=int,
        default=HttpOptions().max_sessions,
        metavar="N",
        help=f"open stateful sessions at most (default {HttpOptions().max_sessions})",
    )
    run.add_argument(
        "--max-sessions-per-credential",
        type=int,
        default=HttpOptions().max_sessions_per_credential,
        metavar="N",
        help="open stateful sessions one verified credential may hold (default "
        f"{HttpOptions().max_sessions_per_credential})",
    )
    run.add_argument(
        "--max-batch-size",
        type=int,
        default=HttpOptions().max_batch_size,
        metavar="N",
        help="messages one JSON-RPC batch may hold (protocol 2025-03-26; default "
        f"{HttpOptions().max_batch_size})",
    )
    run.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="HTTP server processes on one socket, each running the app's lifespan (1)",
    )
    run.add_argument(
        "--page-size",
        type=_positive,
        metavar="N",
        help="list N tools, resources, templates or prompts a page, with a nextCursor to "
        "the next (default: the app's page_size, else everything on one page)",
    )
    run.add_argument(
        "--shutdown-timeout",
        type=float,
        default=HttpOptions().shutdown_timeout,
        metavar="SECONDS",
        help="on SIGTERM, how long calls in flight may take to finish "
        f"(default {HttpOptions().shutdown_timeout:g})",
    )
    run.add_argument(
        "--redis-url",
        metavar="URL",
        help="share events, rate limits, caller state, MCP tasks and (stateful) resumable "
        "streams through Redis (the redis extra)",
    )
    run.add_argument(
        "--task-queue",
        action="store_true",
        help="run tasks' calls on 'mcpfusion worker' processes through a queue in the "
        "--redis-url Redis, not in the web workers (the queue extra)",
    )
    run.add_argument(
        "--request-state-key",
        action="append",
        dest="request_state_keys",
        metavar="KEY",
        help="a secret (32+ bytes) sealing 2026-07-28 requestState, shared by every replica "
        "so any of them takes a call's next round; repeatable, the first seals (rotation); "
        f"default: the comma-separated keys of ${STATE_KEY_VARIABLE}, else one per server",
    )
    auth = run.add_argument_group(
        "authorization", "require a bearer JWT of one issuer (OAuth 2.1 resource server)"
    )
    auth.add_argument("--auth-issuer", metavar="URL", help="the issuer (iss) of accepted tokens")
    auth.add_argument("--auth-jwks-url", metavar="URL", help="where the issuer publishes its keys")
    auth.add_argument(
        "--auth-resource", metavar="URL", help="this endpoint's public URL (the resource)"
    )
    auth.add_argument(
        "--auth-audience", metavar="AUD", help="the audience tokens carry (default: resource)"
    )
    auth.add_argument(
        "--auth-scope",
        action="append",
        dest="auth_scopes",
        metavar="SCOPE",
        help="a scope every request needs (403 without it); repeatable",
    )
    signin = run.add_argument_group(
        "sign-in", "be the OAuth authorization server MCP clients sign users in with"
    )
    signin.add_argument("--signin-issuer", metavar="URL", help="the OpenID provider's issuer")
    signin.add_argument(
        "--signin-github",
        action="store_true",
        help="sign in at GitHub (OAuth only, no OpenID issuer) instead of --signin-issuer",
    )
    signin.add_argument("--signin-client-id", metavar="ID", help="this server's client there")
    signin.add_argument(
        "--signin-secret-env",
        metavar="NAME",
        default="MCPFUSION_SIGNIN_SECRET",
        help="the environment variable holding that client's secret "
        "(default: MCPFUSION_SIGNIN_SECRET)",
    )
    signin.add_argument(
        "--signin-key-env",
        metavar="NAME",
        default="MCPFUSION_SIGNIN_KEY",
        help="the environment variable holding the PEM P-256 key signing tokens, the same "
        "for every worker (default: MCPFUSION_SIGNIN_KEY; unset: one key per process)",
    )
    signin.add_argument(
        "--signin-resource", metavar="URL", help="this endpoint's public URL (the resource)"
    )
    signin.add_argument(
        "--signin-tenant-claim",
        metavar="CLAIM",
        help="the user's claim naming their tenant (Entra: tid, Google: hd)",
    )
    signin.add_argument(
        "--signin-scope",
        action="append",
        dest="signin_scopes",
        metavar="SCOPE",
        help="a scope clients may ask for; repeatable",
    )
    signin.add_argument(
        "--signin-provider-scope",
        action="append",
        dest="signin_provider_scopes",
        metavar="SCOPE",
        help="a scope asked of the provider, openid among them; repeatable (default: openid "
        "email profile; add offline_access to refresh the provider's token for exchange)",
    )
    signin.add_argument(
        "--signin-token-exchange",
        choices=("rfc8693", "on_behalf_of"),
        default="rfc8693",
        help="how ctx.token_for exchanges the user's token at the provider: RFC 8693 "
        "(default), or Entra ID's on_behalf_of",
    )
    run.set_defaults(handler=_run)
