"""Calling downstream APIs as the signed-in user: token exchange (RFC 8693) at the provider."""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections import OrderedDict
from typing import Final

from starlette.types import ASGIApp, Receive, Scope, Send

from mcpfusion._auth.signin.config import SignIn
from mcpfusion._auth.signin.plain import provider_for
from mcpfusion._auth.signin.provider import ProviderError, upstream_of
from mcpfusion._auth.signin.sealed import Sealer
from mcpfusion._auth.signin.store import Record, SignInStore
from mcpfusion._errors import ToolError
from mcpfusion._identity import Identity
from mcpfusion._tools.downstream import SERVING_TOKEN_SOURCE

logger = logging.getLogger("mcpfusion.auth")

GRANT: Final = "urn:ietf:params:oauth:grant-type:token-exchange"
ON_BEHALF_OF: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ACCESS_TOKEN: Final = "urn:ietf:params:oauth:token-type:access_token"
MARGIN_SECONDS: Final = 30
"""A cached token is renewed this long before it expires, so no call carries a dying one."""


class TokenExchange:
    """Tokens for downstream APIs, exchanged at the provider for the signed-in caller.

    The caller's token never leaves the server: the provider's token of the caller's
    sign-in (kept by the facade for its grant) is exchanged for one whose audience is the
    downstream API. Tokens are cached until shortly before they expire.

    The exchange is RFC 8693's, or with ``SignIn(token_exchange="on_behalf_of")`` Entra
    ID's on-behalf-of grant (``urn:ietf:params:oauth:grant-type:jwt-bearer``).

    Example::

        exchange = TokenExchange(signin)

        @billing.action()
        async def statement(ctx: Context) -> str:
            token = await exchange.token_for(ctx.identity, "https://ledger.example.com")
            ...

    Args:
        settings: the ``SignIn`` the server runs with (its store holds the sign-ins).
        max_cached: tokens kept at most; the least recently used go first.
    """

    def __init__(self, settings: SignIn, *, max_cached: int = 10_000) -> None:
        assert settings.store is not None  # SignIn makes one
        self._store: SignInStore = settings.store
        self._provider = provider_for(settings)
        self._issuer = settings.issuer_url
        self._sealer = Sealer(settings.client_secret)
        self._refresh_ttl = settings.refresh_ttl
        self._on_behalf_of = settings.token_exchange == "on_behalf_of"
        self._client_id, self._client_secret = settings.client_id, settings.client_secret
        self._max = max_cached
        self._cache: OrderedDict[tuple[str, str, str], tuple[str, float]] = OrderedDict()

    async def token_for(self, identity: Identity | None, audience: str, scope: str = "") -> str:
        """A token for ``audience`` acting as ``identity``, from the cache or the provider.

        Raises:
            ToolError: ``AUTH_REQUIRED`` when the caller did not sign in through the facade,
                the sign-in has ended, or the provider refuses the exchange: the agent can
                tell the user to sign in again.
        """
        grant = identity.claims.get("gid") if identity is not None else None
        if (
            identity is None
            or not isinstance(grant, str)
            or identity.claims.get("iss") != (self._issuer)
        ):
            raise _required("the caller did not sign in with this server")
        key = (hashlib.sha256(grant.encode()).hexdigest(), audience, scope)
        cached = self._cache.get(key)
        if cached is not None and cached[1] > time.monotonic():
            self._cache.move_to_end(key)
            return cached[0]
        if await self._store.get("revoked", grant) is not None:
            raise _required("the sign-in has ended")
        upstream = await self._upstream(grant)
        form = self._form(upstream["access_token"], audience, scope)
        try:
            # Entra's on-behalf-of form carries the client itself, as Microsoft documents it.
            answer = await self._provider.exchange(form, basic=not self._on_behalf_of)
        except ProviderError as exc:
            logger.warning("token exchange for %s refused: %s", audience, exc)
            raise _required(f"the identity provider gave no token for {audience}") from None
        token, lifetime = answer.get("access_token"), answer.get("expires_in", 60)
        if not isinstance(token, str) or not isinstance(lifetime, int):
            raise _required(f"the identity provider gave no token for {audience}")
        self._cache[key] = (token, time.monotonic() + lifetime - MARGIN_SECONDS)
        while len(self._cache) > self._max:
            self._cache.popitem(last=False)
        return token

    def _form(self, subject: str, audience: str, scope: str) -> dict[str, str]:
        """The token request exchanging ``subject`` (the provider's token of the sign-in)
        for one for ``audience``: RFC 8693's form, or Entra ID's on-behalf-of form, which
        names the audience by its scopes (``AUDIENCE/.default`` unless ``scope`` is given)."""
        if self._on_behalf_of:
            return {
                "grant_type": ON_BEHALF_OF,
                "client_id": self._client_id,
                "client_secret": self._client_secret,
                "assertion": subject,
                "scope": scope or f"{audience.rstrip('/')}/.default",
                "requested_token_use": "on_behalf_of",
            }
        form = {
            "grant_type": GRANT,
            "subject_token": subject,
            "subject_token_type": ACCESS_TOKEN,
            "requested_token_type": ACCESS_TOKEN,
            "audience": audience,
        }
        if scope:
            form["scope"] = scope
        return form

    async def _upstream(self, grant: str) -> Record:
        """The provider's live token of ``grant``, refreshed at the provider when it expired.

        Raises:
            ToolError: ``AUTH_REQUIRED`` when there is none, or it expired and cannot be
                refreshed (no refresh token, or the provider refused it).
        """
        purpose = f"upstream:{grant}"
        upstream = self._sealer.open(await self._store.get("upstream", grant), purpose)
        if upstream is None or not isinstance(upstream.get("access_token"), str):
            raise _required("the sign-in has ended")
        if upstream.get("expires_at", math.inf) - MARGIN_SECONDS > time.time():
            return upstream
        refresh = upstream.get("refresh_token")
        if not isinstance(refresh, str):
            raise _required("the sign-in at the identity provider has expired")
        try:
            answer = await self._provider.refresh(refresh)
        except ProviderError as exc:
            logger.warning("refreshing the provider's token refused: %s", exc)
            raise _required("the sign-in at the identity provider has expired") from None
        renewed = upstream_of(answer, upstream)
        if not isinstance(renewed.get("access_token"), str):
            raise _required("the sign-in at the identity provider has expired")
        # Another worker may refresh the same grant at once; the provider decides whether
        # both refreshed tokens stay valid (rotation). The last write wins here.
        sealed = self._sealer.seal(renewed, purpose)
        await self._store.put("upstream", grant, sealed, self._refresh_ttl)
        return renewed


def serving_with(exchange: TokenExchange, endpoint: ASGIApp) -> ASGIApp:
    """``endpoint`` with ``exchange`` behind ``ctx.token_for`` while it serves a request."""

    async def with_exchange(scope: Scope, receive: Receive, send: Send) -> None:
        # Calls run in tasks started from the request (a stateful session's from its
        # first request), which inherit the context variable.
        token = SERVING_TOKEN_SOURCE.set(exchange)
        try:
            await endpoint(scope, receive, send)
        finally:
            SERVING_TOKEN_SOURCE.reset(token)

    return with_exchange


def _required(why: str) -> ToolError:
    return ToolError(
        "AUTH_REQUIRED",
        f"Signing in again is needed: {why}.",
        recovery="Ask the user to sign in again, then retry.",
    )
