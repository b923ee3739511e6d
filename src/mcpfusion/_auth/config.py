"""HTTP authorization as configuration: the ``Auth`` option, the verifier protocol, API keys."""

from __future__ import annotations

import hashlib
import hmac
import inspect
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable
from urllib.parse import urlsplit

from mcpfusion._identity import Identity

logger = logging.getLogger("mcpfusion.auth")

MAX_TOKEN_CHARS: Final = 8192
"""A longer bearer token is refused unread (401): no verifier parses or sends it anywhere."""

Tenant = str | Callable[[Mapping[str, Any]], str | None] | None
"""A fixed tenant for every token of an issuer, or a function of the verified claims."""


class VerifierUnavailable(Exception):
    """A verifier cannot decide: its JWKS or introspection endpoint failed.

    The request is refused with 503 (fail closed) and the cause is logged.
    """


@runtime_checkable
class Verifier(Protocol):
    """Turns a bearer token into the caller's ``Identity``.

    ``verify`` returns ``None`` for a token it does not accept (401), an expired one
    included: the verifier judges expiry, with whatever clock skew it allows. It raises
    ``VerifierUnavailable`` when it cannot tell (503).
    """

    async def verify(self, token: str) -> Identity | None:
        """The identity ``token`` proves, or ``None``."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Auth:
    """HTTP authorization: the server is an OAuth 2.1 resource server (the MCP spec's).

    A request without a valid bearer token gets 401 with ``WWW-Authenticate: Bearer`` and
    ``resource_metadata``, the RFC 9728 protected resource metadata is served at its
    well-known path, and a token without ``required_scopes`` gets 403
    ``insufficient_scope``. Scopes per action are checked on each call (``FORBIDDEN``).

    Example::

        Auth(
            verifier=JWTVerifier(issuer="https://id.example.com", audience=URL, jwks_url=...),
            resource="https://mcp.example.com/mcp",
            authorization_servers=["https://id.example.com"],
        )

    Attributes:
        verifier: what checks tokens (``JWTVerifier``, ``IntrospectionVerifier``,
            ``APIKeyVerifier``, or several with ``any_of``).
        resource: the public URL of the MCP endpoint, as clients reach it.
        authorization_servers: the issuers clients get tokens from (named in the
            metadata).
        required_scopes: scopes every request needs (403 without them).
        scopes_supported: the scopes the metadata advertises.
        resource_name: a human-readable name for the metadata.

    Raises:
        TypeError, ValueError: on a malformed option.
    """

    verifier: Verifier
    resource: str
    authorization_servers: Sequence[str]
    required_scopes: Sequence[str] = ()
    scopes_supported: Sequence[str] | None = None
    resource_name: str | None = None

    def __post_init__(self) -> None:
        verify = getattr(self.verifier, "verify", None)
        if not inspect.iscoroutinefunction(verify):
            raise TypeError("verifier needs an async verify(token) method")
        _require_url(self.resource, "resource")
        servers = self.authorization_servers
        if isinstance(servers, str) or not servers:
            raise TypeError("authorization_servers is a non-empty list of URLs")
        for server in servers:
            _require_url(server, "an authorization server")
        object.__setattr__(self, "authorization_servers", tuple(servers))
        for name in ("required_scopes", "scopes_supported"):
            values = getattr(self, name)
            if values is None:
                continue
            if isinstance(values, str) or not all(isinstance(v, str) and v for v in values):
                raise TypeError(f"{name} is a list of scope names")
            object.__setattr__(self, name, tuple(values))


def tenant_of(tenant: Tenant, claims: Mapping[str, Any]) -> str | None:
    """The tenant a verifier's ``tenant=`` gives a token's verified claims.

    Raises:
        ValueError: when that is not a str or None (a list or an object in the claim): the
            token is refused (401) rather than served under a tenant it does not name.
    """
    found = tenant(claims) if callable(tenant) else tenant
    if found is not None and not isinstance(found, str):
        raise ValueError(f"the tenant is a str or None; got a {type(found).__name__}")
    return found


def _require_url(value: object, name: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} is a URL str; got {value!r}")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{name} must be an http(s) URL; got {value!r}")


def hash_api_key(key: str) -> str:
    """The stored form of an API key: ``sha256:`` and the hex digest.

    A fast hash suits API keys because they are random (give them 128 bits or more):
    there is no dictionary to try, unlike passwords.
    """
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


class APIKeyVerifier:
    """API keys as bearer tokens, stored hashed, each mapped to the identity it proves.

    A key whose identity has an ``expires_at`` is refused from that second on.

    Example::

        APIKeyVerifier({hash_api_key(key): Identity("ci-bot", scopes={"billing:read"})})

    Only hashes are kept: a leaked configuration gives no key away. A presented key is
    hashed, and the digest compared with ``hmac.compare_digest``.

    Raises:
        TypeError, ValueError: on a stored form that is not ``sha256:`` and 64 hex digits,
            or a value that is not an ``Identity``.
    """

    def __init__(self, keys: Mapping[str, Identity]) -> None:
        table: dict[bytes, tuple[bytes, Identity]] = {}
        for stored, identity in keys.items():
            prefix, _, digest = stored.partition(":")
            if prefix != "sha256" or len(digest) != 64:
                raise ValueError("a stored API key is hash_api_key(key): 'sha256:' and 64 hex")
            if not isinstance(identity, Identity):
                raise TypeError(f"an API key maps to an Identity; got {identity!r}")
            raw = bytes.fromhex(digest)
            table[raw[:8]] = (raw, identity)
        self._keys = table

    async def verify(self, token: str) -> Identity | None:
        """The identity of the key ``token``, or ``None`` for an unknown key."""
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        # Looked up by the first 8 bytes of the digest, then compared whole in constant
        # time: the lookup's timing depends on the digest, never on the secret itself.
        entry = self._keys.get(digest[:8])
        if entry is None or not hmac.compare_digest(entry[0], digest):
            return None
        identity = entry[1]
        if identity.expires_at is not None and identity.expires_at <= time.time():
            return None
        return identity


class _AnyOf:
    """The first verifier that accepts a token; fails closed if one could not tell."""

    def __init__(self, verifiers: Sequence[Verifier]) -> None:
        self.verifiers = tuple(verifiers)

    async def verify(self, token: str) -> Identity | None:
        unavailable: VerifierUnavailable | None = None
        for verifier in self.verifiers:
            try:
                identity = await verifier.verify(token)
            except VerifierUnavailable as exc:
                unavailable = exc
                continue
            if identity is not None:
                return identity
        if unavailable is not None:
            raise unavailable
        return None


def any_of(*verifiers: Verifier) -> Verifier:
    """A verifier accepting what any of ``verifiers`` accepts, tried in order.

    When none accepts the token and one of them could not tell (its endpoint is down),
    the request fails closed with 503 rather than 401.

    Raises:
        TypeError: without verifiers, or on an object without ``async verify(token)``.
    """
    if not verifiers:
        raise TypeError("any_of needs at least one verifier")
    for verifier in verifiers:
        if not inspect.iscoroutinefunction(getattr(verifier, "verify", None)):
            raise TypeError(f"{verifier!r} has no async verify(token) method")
    return _AnyOf(verifiers)
