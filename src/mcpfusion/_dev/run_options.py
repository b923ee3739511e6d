"""The ``HttpOptions`` ``mcpfusion run``'s flags ask for: authorization, sign-in, Redis, keys."""

from __future__ import annotations

import argparse
import functools
import os
from collections.abc import Mapping
from typing import Any

from mcpfusion._dev.target import UsageError
from mcpfusion._serve.options import HttpOptions

STATE_KEY_VARIABLE = "MCPFUSION_REQUEST_STATE_KEY"
"""The environment variable holding the request-state keys when no ``--request-state-key``
flag is given: one key, or several separated by commas (the first seals)."""


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
    found = os.environ.get(STATE_KEY_VARIABLE, "")
    return [key.strip() for key in found.split(",") if key.strip()]


def _redis(args: argparse.Namespace) -> dict[str, Any]:
    """The shared parts ``--redis-url`` asks for: events, rate limits, and (stateful)
    resumable streams."""
    if not args.redis_url:
        return {}
    try:
        # Imported here: redis-py loads only for a server that uses it.
        from mcpfusion._serve.caller_redis import shared_state
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
    from mcpfusion._auth.config import Auth
    from mcpfusion._auth.jwt import JWTVerifier

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
    from mcpfusion._auth.signin.config import SignIn
    from mcpfusion._auth.signin.endpoints import github

    store = None
    if args.redis_url:
        from mcpfusion._serve.redis_signin import RedisSignInStore

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
