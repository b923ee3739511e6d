"""The sign-in option: which OpenID provider users sign in with, and the facade's limits."""

from __future__ import annotations

import ssl
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from mcpfusion._auth.config import Tenant, _require_url
from mcpfusion._auth.signin.endpoints import OAuthProvider
from mcpfusion._auth.signin.store import MemoryStore, SignInStore


@dataclass(frozen=True, slots=True, kw_only=True)
class SignIn:
    """Sign-in with an identity provider: the server becomes an authorization server.

    MCP clients register (RFC 7591), send the user to ``/oauth/authorize`` with PKCE,
    see a consent page naming the client and the scopes, sign in at the provider, and get
    the facade's own short-lived tokens bound to ``resource``; refresh and revocation
    included. Serving with ``signin=`` sets ``auth=`` to accept those tokens.

    The provider is an OpenID Connect provider named by ``issuer`` (its discovery read),
    or an OAuth-only one (GitHub) named by its endpoints: ``oauth=github()``.

    Example::

        SignIn(
            issuer="https://login.example.com",
            client_id="mcp-facade",
            client_secret=SECRET,
            resource="https://mcp.example.com/mcp",
            scopes_supported=["billing:read"],
        )

    Attributes:
        issuer: the OpenID provider's issuer URL (its discovery document is read from it);
            empty with ``oauth``.
        oauth: an OAuth-only provider by its endpoints (``OAuthProvider``, ``github()``)
            instead of ``issuer``: no discovery, no ID token, the user read from its API.
        client_id: the facade's client at the provider.
        client_secret: that client's secret (never shown in the ``repr``).
        resource: the public URL of the MCP endpoint; the facade's issuer is its origin.
        scopes_supported: the scopes clients may ask for; a client asking none gets all.
        tenant: the tenant of a signed-in user: fixed, or a function of the user's claims
            (the ID token's and the provider's userinfo).
        scopes_of: the scopes a signed-in user may hold, a function of their claims (their
            groups or roles at the provider); a token gets those the client asked for and
            the user consented to among them. ``None``: every supported scope.
        provider_scopes: the scopes asked of the provider (``openid`` among them for an
            OpenID provider); empty: ``openid email profile``, or ``oauth.scopes``.
        provider_userinfo: read the provider's userinfo beside its ID token. ``False``
            when the provider's access token is for another API than its userinfo (Entra
            ID asked for a scope of your own API, for on-behalf-of): the ID token alone.
        token_ttl: seconds an access token lives.
        refresh_ttl: seconds a refresh token lives (each use gives a new one).
        client_ttl: seconds a registered client is remembered.
        max_clients: registered clients at most; registrations past it are refused (429).
        registration_limit: registrations one address may make in an hour, at once or
            spread out; past it they are refused (429 with ``Retry-After``). The buckets
            live in the server's ``rate_limit_store`` (Redis with ``--redis-url``).
        consent_ttl: seconds a consent the user chose to remember (a box on the consent
            page) lasts, per user, client and scopes; revoking a grant of the client
            forgets it. ``0``: the page offers no such box.
        metadata_documents: accept clients named by the HTTPS URL of their client ID
            metadata document (MCP's preferred registration), fetched with SSRF guards
            and cached; advertised as ``client_id_metadata_document_supported``.
        metadata_documents_tls: the certificate authorities documents' servers are
            checked against (an ``ssl.SSLContext``); ``None``: the system's.
        metadata_documents_private: fetch documents from loopback and private addresses
            too. For tests only: it lets a client make the server fetch inside its network.
        token_exchange: how ``ctx.token_for`` asks the provider for a downstream token:
            ``"rfc8693"`` (token exchange: Keycloak, Okta, ...) or ``"on_behalf_of"``
            (Entra ID's on-behalf-of grant; the audience is named by its scopes).
        signing_key: a PEM P-256 private key signing the tokens, the same in every worker;
            ``None``: one made per process.
        store: where clients, codes and grants live; ``None``: a ``MemoryStore`` made here,
            shared by the server and any ``TokenExchange`` of these settings.

    Raises:
        TypeError, ValueError: on a malformed option.
    """

    issuer: str = ""
    oauth: OAuthProvider | None = None
    client_id: str
    client_secret: str = field(repr=False)
    resource: str
    scopes_supported: Sequence[str] = ()
    tenant: Tenant = None
    scopes_of: Callable[[Mapping[str, Any]], Collection[str]] | None = None
    provider_scopes: Sequence[str] = ()
    provider_userinfo: bool = True
    token_ttl: int = 300
    refresh_ttl: int = 14 * 86400
    client_ttl: int = 90 * 86400
    max_clients: int = 10_000
    registration_limit: int = 20
    consent_ttl: int = 30 * 86400
    metadata_documents: bool = True
    metadata_documents_tls: ssl.SSLContext | None = None
    metadata_documents_private: bool = False
    token_exchange: Literal["rfc8693", "on_behalf_of"] = "rfc8693"
    signing_key: str | None = field(default=None, repr=False)
    store: SignInStore | None = None

    def __post_init__(self) -> None:
        if self.oauth is None:
            _require_url(self.issuer, "issuer")
        elif not isinstance(self.oauth, OAuthProvider):
            raise TypeError("oauth is an OAuthProvider (or github())")
        elif self.issuer:
            raise ValueError("name the provider by issuer or by oauth endpoints, not both")
        _require_url(self.resource, "resource")
        for name in ("client_id", "client_secret"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise TypeError(f"{name} is a non-empty str")
        scopes = self.scopes_supported
        if isinstance(scopes, str) or not all(isinstance(s, str) and s for s in scopes):
            raise TypeError("scopes_supported is a list of scope names")
        if any(" " in scope for scope in scopes):
            raise ValueError("a scope name has no space")
        object.__setattr__(self, "scopes_supported", tuple(scopes))
        if self.scopes_of is not None and not callable(self.scopes_of):
            raise TypeError("scopes_of is a function of the user's claims")
        ttl = self.consent_ttl
        if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0:
            raise ValueError(f"consent_ttl must be a whole number of seconds; got {ttl!r}")
        if self.metadata_documents_tls is not None and not isinstance(
            self.metadata_documents_tls, ssl.SSLContext
        ):
            raise TypeError("metadata_documents_tls is an ssl.SSLContext")
        if not isinstance(self.provider_userinfo, bool):
            raise TypeError("provider_userinfo is a bool")
        if self.oauth is not None and not self.provider_userinfo:
            raise ValueError("an OAuth-only provider's user is its userinfo: it is always read")
        if self.token_exchange not in ("rfc8693", "on_behalf_of"):
            raise ValueError(
                f"token_exchange is rfc8693 or on_behalf_of; got {self.token_exchange!r}"
            )
        if self.store is None:
            object.__setattr__(self, "store", MemoryStore())
        asked = self.provider_scopes
        if isinstance(asked, str) or not all(isinstance(s, str) and s for s in asked):
            raise TypeError("provider_scopes is a list of scope names")
        if not asked:
            asked = ("openid", "email", "profile") if self.oauth is None else self.oauth.scopes
        elif self.oauth is None and "openid" not in asked:
            raise ValueError("provider_scopes is a list of scope names with openid among them")
        object.__setattr__(self, "provider_scopes", tuple(asked))
        for name in ("token_ttl", "refresh_ttl", "client_ttl", "max_clients", "registration_limit"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int; got {value!r}")

    @property
    def base_url(self) -> str:
        """Where the facade's endpoints are: the resource's origin."""
        parts = urlsplit(self.resource)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def issuer_url(self) -> str:
        """The facade's issuer identifier: the origin with its ``/``, exactly as the
        protected resource metadata names it (clients compare the two as strings)."""
        return self.base_url + "/"
