"""The facade's own access tokens: short-lived ES256 JWTs bound to the MCP resource."""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Collection, Mapping
from typing import Any, Final

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from mcpfusion._auth.config import MAX_TOKEN_CHARS
from mcpfusion._auth.jwt import JWTVerifier
from mcpfusion._auth.signin.store import SignInStore
from mcpfusion._identity import Identity

FORWARDED_CLAIMS: Final = ("email", "email_verified", "name", "preferred_username")
"""The provider's claims a token carries on, for handlers to read in ``ctx.identity.claims``."""


class TokenIssuer:
    """Signs the facade's access tokens and verifies them (the server's ``Verifier``).

    Each token names its grant (``gid``); revoking the grant (a refresh token or an access
    token sent to the revocation endpoint) refuses every token of it from then on.

    Args:
        issuer: the facade's issuer URL (``iss``).
        audience: the MCP resource (``aud``): a token for another resource is refused.
        store: where revoked grants are remembered.
        signing_key: a PEM P-256 private key, the same in every worker; ``None`` makes one
            for this process.
        ttl: seconds an access token lives.
    """

    def __init__(
        self,
        *,
        issuer: str,
        audience: str,
        store: SignInStore,
        signing_key: str | None,
        ttl: int,
    ) -> None:
        if signing_key is None:
            private = ec.generate_private_key(ec.SECP256R1())
        else:
            loaded = serialization.load_pem_private_key(signing_key.encode(), password=None)
            if not isinstance(loaded, ec.EllipticCurvePrivateKey) or not isinstance(
                loaded.curve, ec.SECP256R1
            ):
                raise ValueError("signing_key must be a PEM P-256 (ES256) private key")
            private = loaded
        self.issuer, self.audience, self.ttl = issuer, audience, ttl
        self._store = store
        self._private = private
        public = private.public_key()
        pem = public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        # Named after the key itself: every worker holding it publishes the same kid.
        self.kid = hashlib.sha256(pem).hexdigest()[:16]
        self._jwk = {
            **json.loads(jwt.get_algorithm_by_name("ES256").to_jwk(public)),
            "kid": self.kid,
            "use": "sig",
            "alg": "ES256",
        }
        self._verifier = JWTVerifier(
            issuer=issuer,
            audience=audience,
            public_key=pem,
            algorithms=("ES256",),
            leeway=5,
            tenant=_tenant_claim,
        )

    def jwks(self) -> Mapping[str, Any]:
        """The public key set, served at the facade's ``jwks_uri``."""
        return {"keys": [self._jwk]}

    def issue(
        self,
        *,
        subject: str,
        client_id: str,
        scopes: Collection[str],
        grant: str,
        tenant: str | None,
        claims: Mapping[str, Any],
    ) -> str:
        """A signed access token for ``subject`` using ``client_id``, of grant ``grant``."""
        now = int(time.time())
        payload: dict[str, Any] = {
            "iss": self.issuer,
            "aud": self.audience,
            "sub": subject,
            "client_id": client_id,
            "scope": " ".join(sorted(scopes)),
            "gid": grant,
            "jti": secrets.token_urlsafe(12),
            "iat": now,
            "exp": now + self.ttl,
        }
        if tenant is not None:
            payload["tenant"] = tenant
        payload.update({k: claims[k] for k in FORWARDED_CLAIMS if k in claims})
        return jwt.encode(payload, self._private, algorithm="ES256", headers={"kid": self.kid})

    async def verify(self, token: str) -> Identity | None:
        """The identity of one of this facade's live tokens, or ``None``."""
        identity = await self._verifier.verify(token)
        if identity is None:
            return None
        grant = identity.claims.get("gid")
        if not isinstance(grant, str) or await self._store.get("revoked", grant) is not None:
            return None
        return identity

    async def grant_of(self, token: str, client_id: str) -> tuple[str, str] | None:
        """The grant and subject a token of this facade issued to ``client_id`` names (expiry
        not checked)."""
        if len(token) > MAX_TOKEN_CHARS:
            return None
        try:
            claims = jwt.decode(
                token,
                self._private.public_key(),
                algorithms=["ES256"],
                audience=self.audience,
                issuer=self.issuer,
                options={"verify_exp": False},
            )
        except jwt.PyJWTError:
            return None
        grant, subject = claims.get("gid"), claims.get("sub")
        if claims.get("client_id") != client_id or not isinstance(grant, str):
            return None  # a client revokes its own tokens only
        return grant, subject if isinstance(subject, str) else ""


def _tenant_claim(claims: Mapping[str, Any]) -> str | None:
    tenant = claims.get("tenant")
    return tenant if isinstance(tenant, str) else None
