"""Verifying bearer JWTs with PyJWT: keys from a JWKS URL (cached, rotated) or a PEM."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

import httpx2
import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from mcpfusion._auth.config import MAX_TOKEN_CHARS, Tenant, VerifierUnavailable, tenant_of
from mcpfusion._identity import Identity

logger = logging.getLogger("mcpfusion.auth")

ALGORITHMS: Final = frozenset({"RS256", "ES256", "EdDSA"})
"""The asymmetric algorithms a verifier may be pinned to: never ``none``, never HMAC."""

_REQUIRED: Final = ["exp", "iss", "aud", "sub"]


class JWTVerifier:
    """Accepts JWT access tokens of one issuer, signed with its asymmetric keys.

    Example::

        JWTVerifier(
            issuer="https://id.example.com",
            audience="https://mcp.example.com/mcp",
            jwks_url="https://id.example.com/.well-known/jwks.json",
            tenant=lambda claims: claims.get("org"),
        )

    The algorithm is pinned: a token whose header names another (``none``, ``HS256``
    signed with the public key) is refused, and so is one whose key is of another type.
    ``iss``, ``aud``, ``exp`` and ``sub`` are required; ``exp`` and ``nbf`` are checked with
    ``leeway`` seconds of clock skew (a token expired 10 s ago passes with the default 30).
    Scopes come from ``scope`` (space-separated) or ``scp`` (a list). A header or claim of
    the wrong type (an ``alg`` list, a tenant that is not a str) refuses the token.

    Keys from ``jwks_url`` are cached for ``cache_seconds``; a token signed with an
    unknown ``kid`` refetches them (a rotation), at most once per ``refresh_seconds``. A
    JWKS endpoint that fails raises ``VerifierUnavailable`` (503), never accepts, and is
    not asked again for ``retry_seconds``: tokens that need it get 503 meanwhile. One
    fetch runs at a time and no request waits for another's: while it runs, keys already
    known still verify, and a token naming an unknown ``kid`` gets 503.

    Args:
        issuer: the ``iss`` every token must carry.
        audience: the ``aud`` (or one of them) every token must carry: this server.
        jwks_url: where the issuer publishes its keys; or
        public_key: one PEM public key (RSA, P-256 or Ed25519).
        algorithms: the accepted algorithms, among RS256, ES256 and EdDSA.
        leeway: seconds of clock skew allowed on ``exp`` and ``nbf``.
        tenant: the tenant of every identity, or a function of the claims.
        cache_seconds: how long fetched keys are trusted.
        refresh_seconds: the least time between two fetches for an unknown ``kid``.
        retry_seconds: the least time between a failed fetch and the next.
        timeout: seconds a JWKS fetch may take.

    Raises:
        ValueError, TypeError: on contradictory or malformed options.
    """

    def __init__(
        self,
        *,
        issuer: str,
        audience: str | Sequence[str],
        jwks_url: str | None = None,
        public_key: str | bytes | None = None,
        algorithms: Collection[str] = ("RS256", "ES256", "EdDSA"),
        leeway: float = 30,
        tenant: Tenant = None,
        cache_seconds: float = 300,
        refresh_seconds: float = 10,
        retry_seconds: float = 5,
        timeout: float = 5,
    ) -> None:
        if not isinstance(issuer, str) or not issuer:
            raise TypeError("issuer is a non-empty str")
        if (jwks_url is None) == (public_key is None):
            raise ValueError("pass exactly one of jwks_url= and public_key=")
        pinned = set(algorithms)
        if not pinned or not pinned <= ALGORITHMS:
            raise ValueError(f"algorithms must be among {sorted(ALGORITHMS)}; got {sorted(pinned)}")
        if not (0 <= leeway <= 300):
            raise ValueError(f"leeway is 0-300 seconds; got {leeway!r}")
        if not (0 <= retry_seconds <= 3600):
            raise ValueError(f"retry_seconds is 0-3600 seconds; got {retry_seconds!r}")
        self.issuer = issuer
        self.audience = [audience] if isinstance(audience, str) else list(audience)
        self.jwks_url = jwks_url
        self.algorithms = frozenset(pinned)
        self.leeway = leeway
        self.tenant = tenant
        self.cache_seconds = cache_seconds
        self.refresh_seconds = refresh_seconds
        self.retry_seconds = retry_seconds
        self.timeout = timeout
        self._keys: dict[str | None, jwt.PyJWK] = {}
        self._fetched_at = -float("inf")
        self._retry_at = -float("inf")
        self._fetching = False
        if public_key is not None:
            self._keys[None] = _pem_key(public_key, self.algorithms)
            self._fetched_at = float("inf")

    def __repr__(self) -> str:
        return f"JWTVerifier(issuer={self.issuer!r})"

    async def verify(self, token: str) -> Identity | None:
        """The identity the token proves, or ``None`` (a bad, expired or foreign token)."""
        if len(token) > MAX_TOKEN_CHARS or token.count(".") != 2:
            return None
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            return None
        if unverified.get("iss") != self.issuer:
            return None  # another issuer's token: not ours to judge (nor to fetch keys for)
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in self.algorithms:
            logger.warning("refused a token of %s signed with %.40r", self.issuer, algorithm)
            return None
        key = await self._key(header.get("kid"))
        if key is None:
            return None
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[key.algorithm_name],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": _REQUIRED},
            )
        except jwt.PyJWTError as exc:
            logger.info("refused a token of %s: %s", self.issuer, exc)
            return None
        return self._identity(claims)

    def _identity(self, claims: Mapping[str, Any]) -> Identity | None:
        scopes = claims.get("scope", claims.get("scp", ()))
        if isinstance(scopes, str):
            scopes = scopes.split()
        if not isinstance(scopes, list | tuple) or not all(isinstance(s, str) for s in scopes):
            return None
        subject = claims.get("sub")
        client = claims.get("client_id", claims.get("azp"))
        expires = claims.get("exp")
        if not isinstance(subject, str) or not subject or not isinstance(expires, int):
            return None
        try:
            tenant = tenant_of(self.tenant, claims)
        except ValueError as exc:
            logger.info("refused a token of %s: %s", self.issuer, exc)
            return None
        return Identity(
            subject,
            client_id=client if isinstance(client, str) else None,
            scopes=frozenset(scopes),
            expires_at=expires,
            claims=claims,
            tenant=tenant,
        )

    async def _key(self, kid: Any) -> jwt.PyJWK | None:
        if self.jwks_url is None:
            return self._keys.get(None)
        if not isinstance(kid, str | None):
            return None
        now = time.monotonic()
        stale = now - self._fetched_at > self.cache_seconds
        if not stale and (kid in self._keys or now - self._fetched_at < self.refresh_seconds):
            return self._keys.get(kid)
        if self._fetching:
            # Another request's fetch is under way: waiting for it would queue every request
            # behind a hanging endpoint. A key known until now still serves meanwhile.
            if kid in self._keys:
                return self._keys[kid]
            raise VerifierUnavailable(f"the JWKS of {self.issuer} is being fetched")
        if now < self._retry_at:
            # Backing off after a failure: a caller naming unknown kids cannot make every
            # request ask a failing endpoint again.
            raise VerifierUnavailable(f"the JWKS of {self.issuer} is unavailable")
        self._fetching = True
        try:
            self._keys = await self._fetch()
            self._fetched_at = time.monotonic()
        except VerifierUnavailable:
            self._retry_at = time.monotonic() + self.retry_seconds
            raise
        finally:
            self._fetching = False
        return self._keys.get(kid)

    async def _fetch(self) -> dict[str | None, jwt.PyJWK]:
        assert self.jwks_url is not None
        try:
            async with httpx2.AsyncClient(timeout=self.timeout) as client:
                response = await client.get(self.jwks_url)
                response.raise_for_status()
                document = response.json()
            keys = document["keys"]
            if not isinstance(keys, list):
                raise TypeError("'keys' is not a list")
        except (httpx2.HTTPError, ValueError, KeyError, TypeError) as exc:
            logger.error("JWKS of %s at %s failed: %s", self.issuer, self.jwks_url, exc)
            raise VerifierUnavailable(f"the JWKS of {self.issuer} is unavailable") from exc
        found: dict[str | None, jwt.PyJWK] = {}
        for entry in keys:
            try:
                key = jwt.PyJWK.from_json(json.dumps(entry))
            except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError):
                continue  # a key of a type or use we do not handle
            if key.algorithm_name in self.algorithms and entry.get("use", "sig") == "sig":
                found[entry.get("kid")] = key
        logger.info("JWKS of %s: %d signing keys", self.issuer, len(found))
        return found


def _pem_key(pem: str | bytes, algorithms: frozenset[str]) -> jwt.PyJWK:
    data = pem.encode() if isinstance(pem, str) else pem
    try:
        key = load_pem_public_key(data)
    except ValueError as exc:
        raise ValueError(f"public_key is not a PEM public key ({exc})") from None
    if isinstance(key, rsa.RSAPublicKey):
        algorithm = "RS256"
    elif isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, ec.SECP256R1):
        algorithm = "ES256"
    elif isinstance(key, ed25519.Ed25519PublicKey):
        algorithm = "EdDSA"
    else:
        raise ValueError("public_key must be an RSA, P-256 or Ed25519 public key")
    if algorithm not in algorithms:
        raise ValueError(f"public_key is a {algorithm} key, not among {sorted(algorithms)}")
    jwk = json.loads(jwt.get_algorithm_by_name(algorithm).to_jwk(key))
    return jwt.PyJWK(jwk, algorithm)
