"""OAuth-only providers (no OpenID discovery, no ID token): their endpoints, and GitHub's."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcpfusion._auth.config import _require_url

Claims = Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class OAuthProvider:
    """An OAuth 2.0 provider named by its endpoints, the user read from its API.

    For providers without OpenID Connect (GitHub): no discovery document and no ID token,
    so the endpoints are given here and the signed-in user is what ``userinfo_url``
    answers to the provider's access token. Pass it as ``SignIn(oauth=...)``;
    ``github()`` is a ready one.

    Example::

        OAuthProvider(
            authorize_url="https://auth.example.com/authorize",
            token_url="https://auth.example.com/token",
            userinfo_url="https://api.example.com/me",
            subject="id",
            scopes=("profile",),
        )

    Attributes:
        authorize_url: where the browser signs in (the code flow, with PKCE).
        token_url: where the code is redeemed (the facade asks for JSON).
        userinfo_url: the API endpoint naming the user of an access token (a JSON object).
        subject: the field of that answer naming the user for good (a str or an integer;
            not an email or a login, which users change).
        more: claim name to URL: further API endpoints read with the same token, their
            JSON answer kept under that claim (GitHub's e-mail addresses, organisations).
        claims: a function of the claims read (the user answer and ``more``) giving
            claims to add or replace: the mapping into ``email``, ``tenant``, groups.
        scopes: the scopes asked of the provider unless ``SignIn(provider_scopes=...)``.
        secret_in_form: the facade's client goes in the token request's form
            (``client_id``, ``client_secret``: GitHub documents this) rather than HTTP Basic.

    Raises:
        TypeError, ValueError: on a malformed option.
    """

    authorize_url: str
    token_url: str
    userinfo_url: str
    subject: str = "sub"
    more: Mapping[str, str] = field(default_factory=dict)
    claims: Callable[[Claims], Claims] | None = None
    scopes: Sequence[str] = ()
    secret_in_form: bool = False

    def __post_init__(self) -> None:
        for name in ("authorize_url", "token_url", "userinfo_url"):
            _require_url(getattr(self, name), name)
        if not isinstance(self.subject, str) or not self.subject:
            raise TypeError("subject is the name of a field of the user answer")
        if not isinstance(self.more, Mapping):
            raise TypeError("more maps claim names to URLs")
        for name, url in self.more.items():
            if not isinstance(name, str) or not name or name == self.subject:
                raise ValueError(f"more names a claim other than the subject; got {name!r}")
            _require_url(url, f"more[{name!r}]")
        object.__setattr__(self, "more", dict(self.more))
        if self.claims is not None and not callable(self.claims):
            raise TypeError("claims is a function of the claims read")
        scopes = self.scopes
        if isinstance(scopes, str) or not all(isinstance(s, str) and s for s in scopes):
            raise TypeError("scopes is a list of scope names")
        object.__setattr__(self, "scopes", tuple(scopes))


GITHUB_API = "https://api.github.com"


def github(*, api: str = GITHUB_API, web: str = "https://github.com") -> OAuthProvider:
    """GitHub (an OAuth app or a GitHub App's user sign-in) as an ``OAuthProvider``.

    The user is ``GET /user``; the subject is their numeric ``id`` (a login can be
    renamed and taken by someone else). ``email`` is the primary verified address from
    ``/user/emails`` (``/user`` shows only a public one), ``login`` is also
    ``preferred_username`` (the facade's tokens carry that and ``name``), and ``orgs`` is
    the list of organisation logins from ``/user/orgs``, for ``tenant=`` or
    ``scopes_of=``. The scopes asked are ``read:user user:email read:org``.

    Args:
        api: the REST API's base URL (GitHub Enterprise Server: ``https://HOST/api/v3``).
        web: where users sign in (GitHub Enterprise Server: ``https://HOST``).
    """
    api, web = api.rstrip("/"), web.rstrip("/")
    return OAuthProvider(
        authorize_url=f"{web}/login/oauth/authorize",
        token_url=f"{web}/login/oauth/access_token",
        userinfo_url=f"{api}/user",
        subject="id",
        more={"emails": f"{api}/user/emails", "organizations": f"{api}/user/orgs"},
        claims=github_claims,
        scopes=("read:user", "user:email", "read:org"),
        secret_in_form=True,
    )


def github_claims(claims: Claims) -> Claims:
    """The claims GitHub's answers give: the primary verified e-mail, the login as
    ``preferred_username``, and the organisation logins as ``orgs``."""
    mapped: dict[str, Any] = {}
    emails = claims.get("emails")
    for entry in emails if isinstance(emails, list) else ():
        if (
            isinstance(entry, dict)
            and entry.get("primary")
            and entry.get("verified") is True
            and isinstance(entry.get("email"), str)
        ):
            mapped["email"], mapped["email_verified"] = entry["email"], True
    if "email" not in mapped:
        # /user's own email is public profile text, not a verified address.
        mapped["email"], mapped["email_verified"] = None, False
    if isinstance(claims.get("login"), str):
        mapped["preferred_username"] = claims["login"]  # OpenID's name for it, kept in tokens
    orgs = claims.get("organizations")
    mapped["orgs"] = [
        org["login"]
        for org in (orgs if isinstance(orgs, list) else ())
        if isinstance(org, dict) and isinstance(org.get("login"), str)
    ]
    return mapped
