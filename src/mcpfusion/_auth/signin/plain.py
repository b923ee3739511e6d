"""Signing in at an OAuth-only provider: its user read from its API, not an ID token."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from mcpfusion._auth.config import tenant_of
from mcpfusion._auth.signin.config import SignIn
from mcpfusion._auth.signin.endpoints import OAuthProvider
from mcpfusion._auth.signin.provider import OpenIDProvider, ProviderError
from mcpfusion._identity import Identity


class PlainOAuthProvider(OpenIDProvider):
    """An ``OpenIDProvider`` whose endpoints are given and whose user is its API's answer.

    The login and the code exchange are the same (code flow with PKCE; the nonce is sent
    and ignored); the user is ``userinfo_url``'s answer to the provider's access token,
    with ``more`` read beside it and ``claims`` mapping them.

    Args:
        endpoints: the provider's ``OAuthProvider``.
        **kwargs: as ``OpenIDProvider`` (``client_id``, ``client_secret``, ``tenant``, ...).
    """

    def __init__(self, endpoints: OAuthProvider, **kwargs: Any) -> None:
        parts = urlsplit(endpoints.authorize_url)
        super().__init__(issuer=f"{parts.scheme}://{parts.netloc}", **kwargs)
        self.endpoints = endpoints
        self.secret_in_form = endpoints.secret_in_form
        self._metadata = {
            "authorization_endpoint": endpoints.authorize_url,
            "token_endpoint": endpoints.token_url,
            "userinfo_endpoint": endpoints.userinfo_url,
        }

    async def redeem(
        self, *, code: str, verifier: str, redirect: str, nonce: str
    ) -> tuple[Identity, Mapping[str, Any]]:
        """The user a provider's code signs in, and the provider's token answer.

        Raises:
            ProviderError: when the provider refuses the code, or its user answer names no
                subject.
        """
        answer = await self._call(
            "POST",
            self.endpoints.token_url,
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect,
                "code_verifier": verifier,
            },
        )
        access = answer.get("access_token")
        if not isinstance(access, str) or not access:
            raise ProviderError("the provider's token answer has no access_token")
        bearer = {"Authorization": f"Bearer {access}"}
        claims: dict[str, Any] = dict(
            await self._call("GET", self.endpoints.userinfo_url, headers=bearer)
        )
        subject = claims.get(self.endpoints.subject)
        if isinstance(subject, int) and not isinstance(subject, bool):
            subject = str(subject)
        if not isinstance(subject, str) or not subject:
            raise ProviderError(f"the provider's user answer has no {self.endpoints.subject}")
        for name, url in self.endpoints.more.items():
            claims[name] = await self._read("GET", url, headers=bearer)
        if self.endpoints.claims is not None:
            mapped = self.endpoints.claims(claims)
            if not isinstance(mapped, Mapping):
                raise TypeError("an OAuthProvider's claims function returns a mapping")
            claims.update(mapped)
        # The user answer's own "sub" (if any) must not name someone else than the subject.
        claims["sub"] = subject
        try:
            tenant = tenant_of(self.tenant, claims)
        except ValueError as exc:
            raise ProviderError(str(exc)) from exc
        return Identity(subject, claims=claims, tenant=tenant), answer


def provider_for(settings: SignIn) -> OpenIDProvider:
    """The provider a ``SignIn`` signs users in at: discovered, or by its endpoints."""
    common: dict[str, Any] = {
        "client_id": settings.client_id,
        "client_secret": settings.client_secret,
        "tenant": settings.tenant,
        "scopes": settings.provider_scopes,
    }
    if settings.oauth is not None:
        return PlainOAuthProvider(settings.oauth, **common)
    return OpenIDProvider(issuer=settings.issuer, userinfo=settings.provider_userinfo, **common)
