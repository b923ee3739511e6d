"""Verifying opaque bearer tokens by OAuth 2.0 token introspection (RFC 7662)."""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final

import httpx2

from mcpfusion._auth.config import MAX_TOKEN_CHARS, Tenant, VerifierUnavailable, tenant_of
from mcpfusion._identity import Identity

logger = logging.getLogger("mcpfusion.auth")

CACHE_ENTRIES: Final = 10_000
"""At most this many active tokens are remembered (the least recently used go first).

As many refused ones are remembered apart, so a flood of unknown tokens never evicts an
active one.
"""

_BEARER: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
"""RFC 6750's ``b64token``: a token of other characters cannot be valid, nor is it sent."""


class IntrospectionVerifier:
    """Asks the authorization server about each token, and remembers its answers.

    An active token is cached until it expires, and for at most ``cache_seconds``: that is
    how long a revocation may take to be noticed. A refused token (inactive, expired, for
    another audience) is remembered for ``inactive_seconds``, so repeating it does not ask
    again. A token that cannot be valid (longer than ``MAX_TOKEN_CHARS``, or not of the
    bearer token syntax, RFC 6750) is refused without asking. An endpoint that fails
    (unreachable, an error status, not JSON) raises ``VerifierUnavailable``: the request
    gets 503, never access.

    Example::

        IntrospectionVerifier(
            "https://id.example.com/oauth/introspect",
            client_id="mcp-server", client_secret=secret, audience=URL,
        )

    Args:
        endpoint: the introspection endpoint.
        client_id: this server's client id at the authorization server.
        client_secret: its secret (sent with HTTP Basic authentication).
        audience: when given, an ``aud`` the response must contain.
        tenant: the tenant of every identity, or a function of the response.
        cache_seconds: the longest an active answer is reused.
        inactive_seconds: how long a refused token is refused without asking again.
        timeout: seconds an introspection request may take.

    Raises:
        ValueError: on an ``inactive_seconds`` outside 0-3600.
    """

    def __init__(
        self,
        endpoint: str,
        *,
        client_id: str,
        client_secret: str,
        audience: str | None = None,
        tenant: Tenant = None,
        cache_seconds: float = 60,
        inactive_seconds: float = 5,
        timeout: float = 5,
    ) -> None:
        if not (0 <= inactive_seconds <= 3600):
            raise ValueError(f"inactive_seconds is 0-3600 seconds; got {inactive_seconds!r}")
        self.endpoint = endpoint
        self.audience = audience
        self.tenant = tenant
        self.cache_seconds = cache_seconds
        self.inactive_seconds = inactive_seconds
        self.timeout = timeout
        self._credentials = (client_id, client_secret)
        self._cache: OrderedDict[bytes, tuple[float, Identity]] = OrderedDict()
        self._refused: OrderedDict[bytes, float] = OrderedDict()

    def __repr__(self) -> str:
        return f"IntrospectionVerifier({self.endpoint!r})"

    async def verify(self, token: str) -> Identity | None:
        """The identity of an active token, or ``None``."""
        if len(token) > MAX_TOKEN_CHARS or not _BEARER.fullmatch(token):
            return None
        # Keyed by a digest: the cache never holds the tokens themselves.
        key = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        now = time.time()
        cached = self._cache.get(key)
        if cached is not None:
            if cached[0] > now:
                self._cache.move_to_end(key)
                return cached[1]
            del self._cache[key]
        refused_until = self._refused.get(key)
        if refused_until is not None:
            if refused_until > now:
                return None
            del self._refused[key]
        answer = await self._introspect(token)
        identity = self._identity(answer, now)
        if identity is None:
            _remember(self._refused, key, now + self.inactive_seconds)
        else:
            until = now + self.cache_seconds
            if identity.expires_at is not None:
                until = min(until, identity.expires_at)
            _remember(self._cache, key, (until, identity))
        return identity

    async def _introspect(self, token: str) -> Mapping[str, Any]:
        try:
            async with httpx2.AsyncClient(timeout=self.timeout) as client:
                response = await client.post(
                    self.endpoint,
                    data={"token": token, "token_type_hint": "access_token"},
                    auth=httpx2.BasicAuth(*self._credentials),
                    headers={"Accept": "application/json"},
                )
                response.raise_for_status()
                answer = response.json()
            if not isinstance(answer, dict):
                raise TypeError("the answer is not a JSON object")
        except (httpx2.HTTPError, ValueError, TypeError) as exc:
            logger.error("token introspection at %s failed: %s", self.endpoint, exc)
            raise VerifierUnavailable("token introspection is unavailable") from exc
        return answer

    def _identity(self, answer: Mapping[str, Any], now: float) -> Identity | None:
        if answer.get("active") is not True:
            return None
        expires = answer.get("exp")
        if expires is not None and (not isinstance(expires, int) or expires <= now):
            return None
        if self.audience is not None:
            audience = answer.get("aud")
            audiences = [audience] if isinstance(audience, str) else audience
            if not isinstance(audiences, list) or self.audience not in audiences:
                return None
        subject = answer.get("sub") or answer.get("username") or answer.get("client_id")
        if not isinstance(subject, str) or not subject:
            return None
        scope = answer.get("scope", "")
        client = answer.get("client_id")
        try:
            tenant = tenant_of(self.tenant, answer)
        except ValueError as exc:
            logger.info("refused an introspected token: %s", exc)
            return None
        return Identity(
            subject,
            client_id=client if isinstance(client, str) else None,
            scopes=frozenset(scope.split()) if isinstance(scope, str) else frozenset(),
            expires_at=expires,
            claims=answer,
            tenant=tenant,
        )


def _remember(cache: OrderedDict[bytes, Any], key: bytes, value: Any) -> None:
    """Stores ``value`` under ``key``; past ``CACHE_ENTRIES`` the first entry goes (the oldest)."""
    cache[key] = value
    if len(cache) > CACHE_ENTRIES:
        cache.popitem(last=False)
