"""The token and revocation endpoints: PKCE codes, rotating refresh, client credentials."""

from __future__ import annotations

import hmac
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final
from urllib.parse import parse_qsl

from authlib.common.security import generate_token
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpfusion._auth.config import hash_api_key
from mcpfusion._auth.signin.clients import (
    Lookup,
    authenticate,
    invalid_client,
    oauth_error,
    read_body,
)
from mcpfusion._auth.signin.config import SignIn
from mcpfusion._auth.signin.store import Record, SignInStore
from mcpfusion._auth.signin.tokens import TokenIssuer

logger = logging.getLogger("mcpfusion.auth")

MAX_FORM_BYTES: Final = 16 * 1024
_VERIFIER: Final = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
"""A PKCE code verifier (RFC 7636 §4.1)."""


def key_of(secret: str) -> str:
    """The store key of a code or refresh token: its hash, so a store dump holds none."""
    return hash_api_key(secret)


def s256(verifier: str) -> str:
    """The PKCE S256 challenge of ``verifier`` (RFC 7636 §4.2), by Authlib."""
    # The stubs leave this one function untyped.
    return str(create_s256_code_challenge(verifier))  # type: ignore[no-untyped-call]


def granted(settings: SignIn, asked: str | None) -> frozenset[str] | None:
    """The scopes a request for ``asked`` gets, or ``None`` when one is not supported."""
    supported = frozenset(settings.scopes_supported)
    if not asked:
        return supported
    wanted = frozenset(asked.split())
    return wanted if wanted <= supported else None


class Grants:
    """Answers ``/oauth/token`` and ``/oauth/revoke`` for the facade's clients."""

    def __init__(
        self,
        settings: SignIn,
        store: SignInStore,
        tokens: TokenIssuer,
        lookup: Lookup,
        forget: Callable[[str, str], Awaitable[None]],
    ) -> None:
        self.settings, self.store, self.tokens, self.lookup = settings, store, tokens, lookup
        self.forget = forget  # a remembered consent ends with a grant revoked by its client

    async def token(self, request: Request) -> Response:
        """The token endpoint (RFC 6749 §3.2)."""
        form = await read_form(request)
        if form is None:
            return oauth_error("invalid_request", "the body is a small form")
        client = await authenticate(form, request, self.lookup)
        if client is None:
            return invalid_client(self.tokens.issuer)
        resource = form.get("resource")
        if resource is not None and resource != self.settings.resource:
            return oauth_error("invalid_target", "tokens are issued for this server only")
        kind = form.get("grant_type")
        if kind not in client["grant_types"]:
            return oauth_error("unauthorized_client", "the client did not register this grant")
        if kind == "authorization_code":
            return await self._code(form, client)
        if kind == "refresh_token":
            return await self._refresh(form, client)
        scopes = granted(self.settings, form.get("scope"))
        if scopes is None:
            return oauth_error("invalid_scope", "a scope asked for is not supported")
        # A service caller: the token speaks for the client itself; no refresh token.
        grant = generate_token(24)
        return self._answer(client["client_id"], client["client_id"], scopes, grant, None, {}, None)

    async def _code(self, form: Mapping[str, str], client: Record) -> Response:
        code = form.get("code", "")
        found = await self.store.take("code", key_of(code))
        if found is None:
            used = await self.store.take("used", key_of(code))
            if used is not None:
                # A code replayed: whoever holds it may have stolen it; the grant it gave goes.
                await self._revoke(used["grant"])
                logger.warning("a code was replayed; its grant is revoked")
            return oauth_error("invalid_grant", "the code is unknown, used or expired")
        if found["client_id"] != client["client_id"]:
            return oauth_error("invalid_grant", "the code was issued to another client")
        if form.get("redirect_uri", found["redirect_uri"]) != found["redirect_uri"]:
            return oauth_error("invalid_grant", "redirect_uri differs from the authorization's")
        verifier = form.get("code_verifier", "")
        if not _VERIFIER.fullmatch(verifier) or not hmac.compare_digest(
            s256(verifier), found["challenge"]
        ):
            return oauth_error("invalid_grant", "the PKCE code verifier does not match")
        grant = found.get("grant") or generate_token(24)
        await self.store.put("used", key_of(code), {"grant": grant}, self.settings.refresh_ttl)
        return await self._issue(found, grant)

    async def _refresh(self, form: Mapping[str, str], client: Record) -> Response:
        found = await self.store.take("refresh", key_of(form.get("refresh_token", "")))
        if found is None or found["client_id"] != client["client_id"]:
            return oauth_error("invalid_grant", "the refresh token is unknown, used or expired")
        if await self.store.get("revoked", found["grant"]) is not None:
            return oauth_error("invalid_grant", "the grant was revoked")
        asked = form.get("scope")
        if asked and not set(asked.split()) <= set(found["scopes"]):
            return oauth_error("invalid_scope", "a refresh cannot widen the scopes")
        if asked:
            found = {**found, "scopes": sorted(set(asked.split()))}
        return await self._issue(found, found["grant"])

    async def _issue(self, found: Record, grant: str) -> Response:
        upstream = found.pop("upstream", None)
        if upstream is not None:
            await self.store.put("upstream", grant, upstream, self.settings.refresh_ttl)
        refresh = generate_token(48)
        record = {**found, "grant": grant}
        await self.store.put("refresh", key_of(refresh), record, self.settings.refresh_ttl)
        return self._answer(
            found["subject"],
            found["client_id"],
            found["scopes"],
            grant,
            found.get("tenant"),
            found.get("claims", {}),
            refresh,
        )

    def _answer(
        self,
        subject: str,
        client_id: str,
        scopes: Any,
        grant: str,
        tenant: str | None,
        claims: Mapping[str, Any],
        refresh: str | None,
    ) -> Response:
        access = self.tokens.issue(
            subject=subject,
            client_id=client_id,
            scopes=scopes,
            grant=grant,
            tenant=tenant,
            claims=claims,
        )
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.settings.token_ttl,
            "scope": " ".join(sorted(scopes)),
        }
        if refresh is not None:
            answer["refresh_token"] = refresh
        return JSONResponse(answer, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})

    async def revoke(self, request: Request) -> Response:
        """The revocation endpoint (RFC 7009): a refresh or access token ends its grant."""
        form = await read_form(request)
        if form is None:
            return oauth_error("invalid_request", "the body is a small form")
        client = await authenticate(form, request, self.lookup)
        if client is None:
            return invalid_client(self.tokens.issuer)
        token = form.get("token", "")
        found = await self.store.get("refresh", key_of(token))
        ended = None
        if found is not None and found["client_id"] == client["client_id"]:
            await self.store.take("refresh", key_of(token))
            ended = (found["grant"], found["subject"])
        elif found is None:
            ended = await self.tokens.grant_of(token, client["client_id"])
        if ended is not None:
            await self._revoke(ended[0])
            await self.forget(ended[1], client["client_id"])
        # 200 whatever the token was (RFC 7009 §2.2): the answer tells a prober nothing.
        return Response(status_code=200, headers={"Cache-Control": "no-store"})

    async def _revoke(self, grant: str) -> None:
        await self.store.put("revoked", grant, {}, self.settings.refresh_ttl)


async def read_form(request: Request) -> dict[str, str] | None:
    """The fields of a small URL-encoded form, or ``None`` for a body over 16 KiB."""
    body = await read_body(request, MAX_FORM_BYTES)
    if body is None:
        return None
    try:
        fields = parse_qsl(body.decode("utf-8", "replace"), max_num_fields=20)
    except ValueError:  # more fields than any OAuth request has
        return None
    return dict(fields)
