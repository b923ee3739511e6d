"""The ``mcpfusion`` command: run, inspect, call, lock, install, new projects, OpenAPI."""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from mcpfusion._app.app import Fusion
from mcpfusion._dev import add_dev_command
from mcpfusion._dev.openapi import add_openapi_command
from mcpfusion._dev.project import add_project_commands
from mcpfusion._dev.target import USAGE_ERROR, UsageError, load_app, parse_arguments, run_command
from mcpfusion._dev.worker import add_worker_command
from mcpfusion._serve.options import HttpOptions
from mcpfusion.terminal import Style, TokenCounter, render_result, render_tools

__all__ = [
    "USAGE_ERROR",
    "UsageError",
    "build_parser",
    "http_options",
    "load_app",
    "main",
    "parse_arguments",
]

logger = logging.getLogger("mcpfusion")

_STATE_KEY_VARIABLE = "MCPFUSION_REQUEST_STATE_KEY"
"""The environment variable holding the request-state keys when no ``--request-state-key``
flag is given: one key, or several separated by commas (the first seals)."""


def _tool(app: Fusion, name: str) -> Mapping[str, Any]:
    tools = {tool["name"]: tool for tool in app.list_tools()}
    if name not in tools:
        raise UsageError(f"unknown tool '{name}'; tools: {', '.join(tools) or '(none)'}")
    return tools[name]


def _inspect(args: argparse.Namespace) -> int:
    app = load_app(args.target)
    tools = app.list_tools()
    if args.json:
        print(json.dumps({"tools": tools}, ensure_ascii=False, indent=2))
        return 0
    counter = TokenCounter()
    server = f"{app.name} {app.version}".strip()
    style = Style.for_stream(sys.stdout, os.environ)
    print(
        render_tools(
            tools, server=server, instructions=app.instructions, counter=counter, style=style
        )
    )
    return 0


async def _report_progress(done: float, total: float | None, message: str | None) -> None:
    of = f"/{total:g}" if total is not None else ""
    print(f"progress {done:g}{of}{f' {message}' if message else ''}", file=sys.stderr)


def _call(args: argparse.Namespace) -> int:
    app = load_app(args.target)
    arguments = parse_arguments(_tool(app, args.tool), args.arguments)
    response = anyio.run(_call_tool, app, args.tool, arguments)
    if args.json:
        print(json.dumps(response.to_mcp(), ensure_ascii=False, indent=2))
    else:
        style = Style.for_stream(sys.stdout, os.environ)
        print(render_result(response, counter=TokenCounter(), style=style))
    return 1 if response.is_error else 0


async def _call_tool(app: Fusion, name: str, arguments: dict[str, Any]) -> Any:
    # In-process, as the process owner: the app's local identity, inside its lifespan.
    async with app.running():
        return await app.call_tool(
            name, arguments, progress=_report_progress, identity=app.local_identity
        )


def http_options(args: argparse.Namespace) -> HttpOptions:
    """The ``HttpOptions`` that ``mcpfusion run``'s flags ask for.

    Raises:
        UsageError: on an incomplete set of ``--auth-*`` flags.
    """
    return HttpOptions(
        host=args.host,
        port=args.port,
        path=args.path,
        stateless=args.stateless,
        json_response=args.json_response,
        resumable=args.resumable,
        hot_path=not args.no_hot_path,
        allowed_hosts=args.allowed_hosts,
        allowed_origins=args.allowed_origins,
        cors_origins=args.cors_origins,
        access_log=args.access_log,
        max_sessions=args.max_sessions,
        max_sessions_per_credential=args.max_sessions_per_credential,
        max_batch_size=args.max_batch_size,
        auth=_auth(args),
        signin=_signin(args),
        workers=args.workers,
        shutdown_timeout=args.shutdown_timeout,
        request_state_keys=_state_keys(args),
        task_queue=args.task_queue,
        **_redis(args),
    )


def _state_keys(args: argparse.Namespace) -> list[str]:
    """The ``--request-state-key`` flags, else the keys of ``MCPFUSION_REQUEST_STATE_KEY``."""
    if args.request_state_keys:
        return list(args.request_state_keys)
    found = os.environ.get(_STATE_KEY_VARIABLE, "")
    return [key.strip() for key in found.split(",") if key.strip()]


def _redis(args: argparse.Namespace) -> dict[str, Any]:
    """The shared parts ``--redis-url`` asks for: events, rate limits, and (stateful)
    resumable streams."""
    if not args.redis_url:
        return {}
    try:
        # Imported here: redis-py loads only for a server that uses it.
        from mcpfusion.redis import shared_state
    except ImportError as exc:
        raise UsageError(f"--redis-url needs the redis extra (mcpfusion[redis]): {exc}") from None
    return shared_state(args.redis_url, stateless=args.stateless)


def _auth(args: argparse.Namespace) -> Any:
    """The JWT authorization the ``--auth-*`` flags describe, or ``None`` without them."""
    given = [args.auth_issuer, args.auth_jwks_url, args.auth_resource, args.auth_audience]
    if not any(given) and not args.auth_scopes:
        return None
    if not (args.auth_issuer and args.auth_jwks_url and args.auth_resource):
        raise UsageError("--auth-issuer, --auth-jwks-url and --auth-resource go together")
    # Imported here: PyJWT and the HTTP client load only for a server that checks tokens.
    from mcpfusion.auth import Auth, JWTVerifier

    try:
        verifier = JWTVerifier(
            issuer=args.auth_issuer,
            audience=args.auth_audience or args.auth_resource,
            jwks_url=args.auth_jwks_url,
        )
        return Auth(
            verifier=verifier,
            resource=args.auth_resource,
            authorization_servers=[args.auth_issuer],
            required_scopes=args.auth_scopes or (),
        )
    except (TypeError, ValueError) as exc:
        raise UsageError(f"bad --auth-* flag: {exc}") from None


def _signin(args: argparse.Namespace) -> Any:
    """The sign-in the ``--signin-*`` flags describe, or ``None`` without them."""
    provider = args.signin_issuer or args.signin_github
    if not (provider or args.signin_client_id or args.signin_resource):
        return None
    if not (provider and args.signin_client_id and args.signin_resource):
        raise UsageError(
            "--signin-issuer (or --signin-github), --signin-client-id and --signin-resource "
            "go together"
        )
    # The secret is read from the environment, never a flag: flags show in process lists.
    secret = os.environ.get(args.signin_secret_env, "")
    if not secret:
        raise UsageError(f"sign-in needs the provider client's secret in ${args.signin_secret_env}")
    from mcpfusion.auth import SignIn, github

    store = None
    if args.redis_url:
        from mcpfusion.redis import RedisSignInStore

        store = RedisSignInStore(args.redis_url)
    try:
        return SignIn(
            issuer=args.signin_issuer or "",
            oauth=github() if args.signin_github else None,
            token_exchange=args.signin_token_exchange,
            client_id=args.signin_client_id,
            client_secret=secret,
            resource=args.signin_resource,
            scopes_supported=args.signin_scopes or (),
            **(
                {"provider_scopes": args.signin_provider_scopes}
                if args.signin_provider_scopes
                else {}
            ),
            signing_key=os.environ.get(args.signin_key_env) or None,
            store=store,
            # A partial of a module function, not a lambda: the options pickle to workers.
            tenant=functools.partial(_claim, args.signin_tenant_claim)
            if args.signin_tenant_claim
            else None,
        )
    except (TypeError, ValueError) as exc:
        raise UsageError(f"bad --signin-* flag: {exc}") from None


def _claim(name: str, claims: Mapping[str, Any]) -> str | None:
    """The str claim ``name`` of a signed-in user (their tenant), or ``None``."""
    found = claims.get(name)
    return found if isinstance(found, str) else None


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
    from mcpfusion.server import run_workers

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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``mcpfusion`` command."""
    parser = argparse.ArgumentParser(
        prog="mcpfusion",
        description="Run, inspect, call, lock and install mcpfusion apps; start a new one. "
        "TARGET is package.module:app or path/to/file.py:app; app may be a "
        "function taking no arguments that returns the app.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

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
        f"default: the comma-separated keys of ${_STATE_KEY_VARIABLE}, else one per server",
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

    inspect = commands.add_parser(
        "inspect", help="show every tool as tools/list does, with token counts"
    )
    inspect.add_argument("target", metavar="TARGET")
    inspect.add_argument("--json", action="store_true", help="print the tools/list result")
    inspect.set_defaults(handler=_inspect)

    call = commands.add_parser("call", help="call a tool in-process and show each block")
    call.add_argument("target", metavar="TARGET")
    call.add_argument("tool", metavar="TOOL")
    call.add_argument(
        "arguments",
        metavar="[ACTION] key=value",
        nargs="*",
        help="the action (grouped tools), then arguments; values are JSON when they parse",
    )
    call.add_argument("--json", action="store_true", help="print the exact MCP result")
    call.set_defaults(handler=_call)

    add_dev_command(commands)
    add_openapi_command(commands)
    add_project_commands(commands)
    add_worker_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``mcpfusion`` command; returns the exit status."""
    return run_command(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
