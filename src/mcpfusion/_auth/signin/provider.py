"""The identity provider behind the facade: OpenID discovery, its login URL, its code exchange."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode

import httpx2

from mcpfusion._auth.config import Tenant, VerifierUnavailable, tenant_of
from mcpfusion._auth.signin.issuers import IssuerVerifiers, names_issuer
from mcpfusion._auth.signin.store import Record
from mcpfusion._identity import Identity

logger = logging.getLogger("mcpfusion.auth")


class ProviderError(Exception):
    """The provider refused or failed a step of a sign-in (its answer is logged, not shown)."""


class OpenIDProvider:
    """An OpenID Connect provider, known by its issuer URL; its endpoints are discovered.

    Discovery (``/.well-known/openid-configuration``) is read on first use and kept; the
    ID token of a sign-in is verified against the provider's JWKS with ``JWTVerifier``.

    Args:
        issuer: the provider's issuer URL.
        client_id: the facade's client at the provider.
        client_secret: its secret (sent with HTTP Basic to the token endpoint).
        tenant: the tenant of a signed-in user: fixed, or a function of the user's claims.
        scopes: the scopes asked of the provider.
        timeout: seconds a call to the provider may take.
        userinfo: read the provider's userinfo beside the ID token (when it has one).
    """

    def __init__(
        self,
        *,
        issuer: str,
        client_id: str,
        client_secret: str,
        tenant: Tenant = None,
        scopes: Sequence[str] = ("openid", "email", "profile"),
        userinfo: bool = True,
        timeout: float = 10,
    ) -> None:
        self.issuer = issuer
        self.client_id = client_id
        self._secret = client_secret
        self.tenant = tenant
        self.scopes = " ".join(scopes)
        self.timeout = timeout
        self.userinfo = userinfo
        self._metadata: Mapping[str, Any] | None = None
        self._verifiers: IssuerVerifiers | None = None
        # The client goes in the token request's form (client_secret_post), not in Basic,
        # for providers that document only that (GitHub).
        self.secret_in_form = False

    def __repr__(self) -> str:
        return f"OpenIDProvider(issuer={self.issuer!r}, client_id={self.client_id!r})"

    async def metadata(self) -> Mapping[str, Any]:
        """The provider's discovery document (fetched once).

        Raises:
            ProviderError: when it cannot be read or names another issuer.
        """
        if self._metadata is None:
            url = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
            document = await self._call("GET", url)
            if not names_issuer(document.get("issuer"), self.issuer):
                raise ProviderError(f"the discovery document at {url} names another issuer")
            for name in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
                if not isinstance(document.get(name), str):
                    raise ProviderError(f"the discovery document at {url} has no {name}")
            self._metadata = document
        return self._metadata

    async def login_url(self, *, state: str, nonce: str, challenge: str, redirect: str) -> str:
        """Where the browser goes to sign in at the provider (code flow with PKCE)."""
        endpoint = (await self.metadata())["authorization_endpoint"]
        query = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": redirect,
            "scope": self.scopes,
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        if "openid" in self.scopes.split():
            # The nonce is OpenID Connect's; plain OAuth servers may refuse it without openid.
            query["nonce"] = nonce
        if "offline_access" in self.scopes.split():
            # OpenID Connect Core §11: a refresh token for offline use needs the consent
            # prompt; providers drop offline_access without it.
            query["prompt"] = "consent"
        return f"{endpoint}{'&' if '?' in endpoint else '?'}{urlencode(query)}"

    async def redeem(
        self, *, code: str, verifier: str, redirect: str, nonce: str
    ) -> tuple[Identity, Mapping[str, Any]]:
        """The user a provider's code signs in, and the provider's token answer.

        The user is the verified ID token and its userinfo; the token answer is kept for
        token exchange (``TokenExchange``).

        Many providers put only ``sub`` in the ID token and the rest (email, a tenant) in
        the userinfo answer: both are read, and the userinfo must name the same subject.

        Raises:
            ProviderError: when the provider refuses the code or its ID token does not verify.
        """
        metadata = await self.metadata()
        answer = await self._call(
            "POST",
            metadata["token_endpoint"],
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect,
                "code_verifier": verifier,
            },
        )
        token = answer.get("id_token")
        if not isinstance(token, str):
            raise ProviderError("the provider's token answer has no id_token")
        if self._verifiers is None:
            self._verifiers = IssuerVerifiers(
                issuer=metadata["issuer"],
                client_id=self.client_id,
                jwks_url=metadata["jwks_uri"],
            )
        checker = self._verifiers.for_token(token)
        try:
            identity = None if checker is None else await checker.verify(token)
        except VerifierUnavailable as exc:
            raise ProviderError(str(exc)) from exc
        if identity is None or identity.claims.get("nonce") != nonce:
            raise ProviderError("the provider's ID token does not verify")
        claims = dict(identity.claims)
        userinfo = metadata.get("userinfo_endpoint") if self.userinfo else None
        access = answer.get("access_token")
        if isinstance(userinfo, str) and isinstance(access, str):
            more = await self._call("GET", userinfo, headers={"Authorization": f"Bearer {access}"})
            if more.get("sub") != identity.subject:
                raise ProviderError("the provider's userinfo names another subject")
            claims = {**more, **claims}  # the signed ID token wins where both speak
        try:
            tenant = tenant_of(self.tenant, claims)
        except ValueError as exc:
            raise ProviderError(str(exc)) from exc
        return Identity(identity.subject, claims=claims, tenant=tenant), answer

    async def exchange(self, form: Mapping[str, str], *, basic: bool = True) -> Mapping[str, Any]:
        """The provider's answer to a token-exchange request (RFC 8693, or Entra's
        on-behalf-of, whose form carries the client: ``basic=False``).

        Raises:
            ProviderError: when the provider refuses or cannot be reached.
        """
        metadata = await self.metadata()
        return await self._call("POST", metadata["token_endpoint"], basic=basic, data=dict(form))

    async def refresh(self, refresh_token: str) -> Mapping[str, Any]:
        """The provider's answer to a refresh of its own token (``upstream_of`` keeps it).

        Raises:
            ProviderError: when the provider refuses or cannot be reached.
        """
        metadata = await self.metadata()
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
        return await self._call("POST", metadata["token_endpoint"], data=form)

    async def _call(
        self, method: str, url: str, *, basic: bool = True, **kwargs: Any
    ) -> Mapping[str, Any]:
        """A provider's JSON object answer to ``method url`` (a token answer read as one).

        Args:
            method: ``GET`` or ``POST``.
            url: the provider's endpoint.
            basic: send the facade's client with HTTP Basic on a POST (the token
                endpoint); ``False`` when the form carries it.
            **kwargs: for ``httpx2``'s ``request`` (``data``, ``headers``).

        Raises:
            ProviderError: on a failure, a status other than 200, an answer that is not
                an object, or a POST answered with an ``error``.
        """
        document = await self._read(method, url, basic=basic, **kwargs)
        if not isinstance(document, dict) or (method == "POST" and "error" in document):
            # GitHub answers a refused code with 200 and an error field.
            logger.warning("the provider's answer to %s %s is refused", method, url)
            raise ProviderError(f"{method} {url} gave no usable answer")
        return document

    async def _read(self, method: str, url: str, *, basic: bool = True, **kwargs: Any) -> Any:
        """A provider's answer to ``method url``, read by ``token_answer``.

        Raises:
            ProviderError: on a failure or a status other than 200.
        """
        headers = {"Accept": "application/json", **kwargs.pop("headers", {})}
        try:
            async with httpx2.AsyncClient(timeout=self.timeout) as client:
                if method == "POST" and basic and self.secret_in_form:
                    client_form = {"client_id": self.client_id, "client_secret": self._secret}
                    kwargs["data"] = {**kwargs.get("data", {}), **client_form}
                elif method == "POST" and basic:  # the secret goes to the token endpoint only
                    kwargs["auth"] = httpx2.BasicAuth(self.client_id, self._secret)
                response = await client.request(method, url, headers=headers, **kwargs)
            document = token_answer(response.headers.get("content-type", ""), response.text)
        except (httpx2.HTTPError, ValueError) as exc:
            raise ProviderError(f"{method} {url} failed: {exc}") from exc
        if response.status_code != 200:
            logger.warning("the provider answered %s %s with %d", method, url, response.status_code)
            raise ProviderError(f"{method} {url} answered {response.status_code}")
        return document


def token_answer(content_type: str, body: str) -> Any:
    """A provider's answer as JSON, however it came.

    GitHub answers the token endpoint form-encoded unless asked for JSON, with ``scope``
    comma-separated and numbers as text: the answer is read either way, ``scope`` is
    space-separated (RFC 6749 §3.3) and ``expires_in`` an int.

    Raises:
        ValueError: when the body is neither JSON nor a form.
    """
    if content_type.split(";")[0].strip().lower() == "application/x-www-form-urlencoded":
        document: Any = dict(parse_qsl(body, keep_blank_values=True, strict_parsing=bool(body)))
    else:
        document = json.loads(body)
    if not isinstance(document, dict):
        return document
    scope = document.get("scope")
    if isinstance(scope, str):
        document["scope"] = " ".join(s for s in scope.replace(",", " ").split() if s)
    for name in ("expires_in", "refresh_token_expires_in"):
        value = document.get(name)
        if isinstance(value, str) and value.isascii() and value.isdigit():
            document[name] = int(value)
    return document


def upstream_of(answer: Mapping[str, Any], previous: Mapping[str, Any] | None = None) -> Record:
    """What the facade keeps of a provider's token answer: the access token, its absolute
    expiry, and the refresh token (a refresh answer without one keeps the ``previous``)."""
    kept: Record = {"access_token": answer.get("access_token")}
    lifetime = answer.get("expires_in")
    if isinstance(lifetime, int) and not isinstance(lifetime, bool):
        kept["expires_at"] = int(time.time()) + lifetime
    refresh = answer.get("refresh_token")
    if not isinstance(refresh, str) and previous is not None:
        refresh = previous.get("refresh_token")
    if isinstance(refresh, str):
        kept["refresh_token"] = refresh
    return kept
