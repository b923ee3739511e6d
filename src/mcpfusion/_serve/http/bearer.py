"""The resource server over HTTP, on the MCP SDK's own ``mcp.server.auth`` building blocks."""

from __future__ import annotations

import json
import logging
from collections.abc import MutableMapping
from typing import Any

from mcp.server.auth.middleware.bearer_auth import (
    AuthenticatedUser,
    BearerAuthBackend,
    RequireAuthMiddleware,
)
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from pydantic import AnyHttpUrl, ConfigDict
from starlette.authentication import AuthenticationError
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from mcpfusion._auth.config import MAX_TOKEN_CHARS, Auth, Verifier, VerifierUnavailable
from mcpfusion._identity import Identity

logger = logging.getLogger("mcpfusion.auth")


class _Token(AccessToken):
    """The SDK's access token, carrying the identity the verifier established."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    identity: Identity


class _Unavailable(AuthenticationError):
    """The verifier could not tell: the request fails closed (503)."""


class _TokenVerifier:
    """The SDK's ``TokenVerifier`` protocol over an mcpfusion ``Verifier``."""

    def __init__(self, verifier: Verifier) -> None:
        self.verifier = verifier

    async def verify_token(self, token: str) -> AccessToken | None:
        if not token or len(token) > MAX_TOKEN_CHARS:
            return None
        try:
            identity = await self.verifier.verify(token)
        except VerifierUnavailable as exc:
            raise _Unavailable(str(exc)) from exc
        except Exception as exc:
            # A verifier's own defect: logged, and the request refused, never let through.
            logger.exception("verifier %r failed", self.verifier)
            raise _Unavailable("the verifier failed") from exc
        if identity is None:
            return None
        return _Token(
            token="",  # the SDK only needs what the token proves, not the token
            client_id=identity.client_id or identity.subject,
            scopes=sorted(identity.scopes),
            # The verifier judged expiry, with its leeway: the SDK compares expires_at with
            # none, which would refuse a JWT the verifier's documented leeway accepts.
            expires_at=None,
            subject=identity.subject,
            claims={"iss": identity.claims.get("iss")} if "iss" in identity.claims else None,
            identity=identity,
        )


def _refuse(conn: HTTPConnection, exc: AuthenticationError) -> Response:
    logger.error("refused %s %s with 503: %s", conn.scope.get("method"), conn.url.path, exc)
    body = {"error": "temporarily_unavailable", "error_description": "Cannot verify tokens now."}
    return Response(
        json.dumps(body),
        status_code=503,
        media_type="application/json",
        headers={"Retry-After": "5", "Cache-Control": "no-store"},
    )


def protected(auth: Auth, path: str, endpoint: ASGIApp) -> list[BaseRoute]:
    """The routes of a protected MCP endpoint: the endpoint behind bearer auth, and its metadata.

    Every request to ``path`` needs a valid bearer token in the ``Authorization`` header
    (a token in the query string is never read); the protected resource metadata is
    served at ``/.well-known/oauth-protected-resource`` plus the resource's path.
    """
    resource = AnyHttpUrl(auth.resource)
    guarded = AuthenticationMiddleware(
        RequireAuthMiddleware(
            endpoint, list(auth.required_scopes), build_resource_metadata_url(resource)
        ),
        backend=BearerAuthBackend(_TokenVerifier(auth.verifier)),
        on_error=_refuse,
    )
    metadata = create_protected_resource_routes(
        resource,
        [AnyHttpUrl(server) for server in auth.authorization_servers],
        scopes_supported=list(auth.scopes_supported) if auth.scopes_supported else None,
        resource_name=auth.resource_name,
    )
    return [*metadata, Route(path, endpoint=guarded)]


def identity_of(scope: MutableMapping[str, Any]) -> Identity | None:
    """The identity a verified bearer token proved for this HTTP request, if any."""
    user = scope.get("user")
    if isinstance(user, AuthenticatedUser) and isinstance(user.access_token, _Token):
        return user.access_token.identity
    return None
