"""Who is calling: the verified identity a call carries, and the scopes it holds."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

_NO_CLAIMS: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True, init=False)
class Identity:
    """The caller of a tool, as a verifier or the app established it; ``ctx.identity``.

    An anonymous caller has no identity at all (``ctx.identity is None``). Over HTTP with
    ``auth=`` the verifier builds it from the bearer token; over stdio the app may declare
    one for the process owner (``Fusion(local_identity=...)``).

    Example::

        Identity("alice", scopes={"billing:read"}, tenant="acme")

    Attributes:
        subject: who the token speaks for (the ``sub`` claim, a key's owner).
        client_id: the OAuth client the token was issued to, when known.
        scopes: what the caller may do.
        expires_at: when the credential expires (seconds since the epoch), when known.
        claims: the verified claims of the token, read-only (empty for an API key).
        tenant: the tenant the caller acts for, derived by the app (a verifier's mapping,
            or a middleware through ``with_tenant``).

    Raises:
        TypeError: on a field of the wrong type (a scope set given as one str, say).
    """

    subject: str
    client_id: str | None
    scopes: frozenset[str]
    expires_at: int | None
    claims: Mapping[str, Any] = field(repr=False)
    tenant: str | None

    def __init__(
        self,
        subject: str,
        *,
        client_id: str | None = None,
        scopes: Collection[str] = frozenset(),
        expires_at: int | None = None,
        claims: Mapping[str, Any] = _NO_CLAIMS,
        tenant: str | None = None,
    ) -> None:
        if not isinstance(subject, str) or not subject:
            raise TypeError(f"an identity's subject is a non-empty str; got {subject!r}")
        if isinstance(scopes, str) or not isinstance(scopes, Iterable):
            raise TypeError("scopes is a collection of str, not a str")
        scopes = frozenset(scopes)
        if not all(isinstance(scope, str) for scope in scopes):
            raise TypeError("scopes is a collection of str")
        for name, value in (("client_id", client_id), ("tenant", tenant)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} is a str or None; got {value!r}")
        if expires_at is not None and (
            isinstance(expires_at, bool) or not isinstance(expires_at, int)
        ):
            raise TypeError(f"expires_at is whole seconds since the epoch; got {expires_at!r}")
        if not isinstance(claims, Mapping):
            raise TypeError(f"claims is a mapping; got {type(claims).__name__}")
        if not isinstance(claims, MappingProxyType):
            claims = MappingProxyType(dict(claims))
        settable = object.__setattr__  # frozen: set once, here
        settable(self, "subject", subject)
        settable(self, "client_id", client_id)
        settable(self, "scopes", scopes)
        settable(self, "expires_at", expires_at)
        settable(self, "claims", claims)
        settable(self, "tenant", tenant)

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its arguments (the claims' read-only view does not pickle), so serving
        # options holding identities reach every worker process.
        return (
            _identity,
            (
                self.subject,
                self.client_id,
                self.scopes,
                self.expires_at,
                dict(self.claims),
                self.tenant,
            ),
        )

    def has(self, scopes: Collection[str]) -> bool:
        """Whether the identity holds every scope of ``scopes``."""
        return self.scopes.issuperset(scopes)

    def with_tenant(self, tenant: str | None) -> Identity:
        """The same identity acting for ``tenant`` (a middleware deriving the tenant uses it)."""
        return Identity(
            self.subject,
            client_id=self.client_id,
            scopes=self.scopes,
            expires_at=self.expires_at,
            claims=self.claims,
            tenant=tenant,
        )


def _identity(
    subject: str,
    client_id: str | None,
    scopes: frozenset[str],
    expires_at: int | None,
    claims: dict[str, Any],
    tenant: str | None,
) -> Identity:
    return Identity(
        subject,
        client_id=client_id,
        scopes=scopes,
        expires_at=expires_at,
        claims=claims,
        tenant=tenant,
    )


def missing_scopes(identity: Identity | None, requires: frozenset[str]) -> frozenset[str]:
    """The scopes of ``requires`` that ``identity`` lacks (all of them for an anonymous caller)."""
    if not requires:
        return requires
    if identity is None:
        return requires
    return requires - identity.scopes


def scopes_of(identity: Identity | None) -> frozenset[str]:
    """The scopes an identity holds; none for an anonymous caller."""
    return frozenset() if identity is None else identity.scopes
