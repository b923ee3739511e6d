"""OAuth-only providers: OAuthProvider, the github() recipe, and SignIn(oauth=...)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpfusion._auth.signin.endpoints import github_claims
from mcpfusion._auth.signin.plain import PlainOAuthProvider, provider_for
from mcpfusion._auth.signin.provider import OpenIDProvider
from mcpfusion.auth import OAuthProvider, SignIn, github

FACADE: dict[str, Any] = {
    "client_id": "facade",
    "client_secret": "s3cret",
    "resource": "https://mcp.example/mcp",
}


def endpoints(**changes: object) -> OAuthProvider:
    """An OAuthProvider at auth.example, with ``changes``."""
    given: dict[str, object] = {
        "authorize_url": "https://auth.example/authorize",
        "token_url": "https://auth.example/token",
        "userinfo_url": "https://api.auth.example/me",
        **changes,
    }
    return OAuthProvider(**given)  # type: ignore[arg-type]  # malformed on purpose below


def test_github_names_its_endpoints_the_numeric_id_and_its_scopes() -> None:
    """github() signs in at github.com, reads the user from the API by its numeric id,
    with the e-mails and organisations beside it; Enterprise Server moves both hosts."""
    found = github()
    assert found.authorize_url == "https://github.com/login/oauth/authorize"
    assert found.token_url == "https://github.com/login/oauth/access_token"
    assert found.userinfo_url == "https://api.github.com/user"
    assert found.subject == "id"
    assert found.more == {
        "emails": "https://api.github.com/user/emails",
        "organizations": "https://api.github.com/user/orgs",
    }
    assert found.scopes == ("read:user", "user:email", "read:org")
    assert found.secret_in_form  # GitHub documents client_id and client_secret as form fields
    enterprise = github(api="https://git.corp/api/v3/", web="https://git.corp/")
    assert enterprise.authorize_url == "https://git.corp/login/oauth/authorize"
    assert enterprise.userinfo_url == "https://git.corp/api/v3/user"


def test_github_claims_take_the_primary_verified_email_and_the_org_logins() -> None:
    """The e-mail is the primary verified one, never /user's public profile text; the
    login is preferred_username; orgs lists the organisation logins."""
    claims = github_claims(
        {
            "login": "octocat",
            "email": "public@profile.example",
            "emails": [
                {"email": "old@example.com", "primary": False, "verified": True},
                {"email": "me@example.com", "primary": True, "verified": True},
            ],
            "organizations": [{"login": "acme"}, {"login": "globex"}, {"id": 3}],
        }
    )
    assert claims == {
        "email": "me@example.com",
        "email_verified": True,
        "preferred_username": "octocat",
        "orgs": ["acme", "globex"],
    }


def test_github_claims_of_hostile_or_unverified_answers_hold_no_email() -> None:
    """An unverified primary address, or answers of the wrong shape, give no e-mail and no
    organisations rather than an error or a wrong value."""
    unverified = github_claims(
        {"emails": [{"email": "x@example.com", "primary": True, "verified": False}]}
    )
    assert unverified["email"] is None and unverified["email_verified"] is False
    hostile = github_claims({"emails": {"email": "x"}, "organizations": "acme", "login": 5})
    assert hostile == {"email": None, "email_verified": False, "orgs": []}


def test_malformed_endpoints_fail_at_definition() -> None:
    """A non-URL endpoint, an empty subject, a ``more`` claim shadowing the subject and a
    str of scopes are refused when the provider is defined."""
    with pytest.raises(ValueError, match="token_url must be an http"):
        endpoints(token_url="auth.example/token")
    with pytest.raises(TypeError, match="subject is the name"):
        endpoints(subject="")
    with pytest.raises(ValueError, match="more names a claim other than the subject"):
        endpoints(subject="id", more={"id": "https://api.auth.example/id"})
    with pytest.raises(ValueError, match=r"more\['orgs'\] must be an http"):
        endpoints(more={"orgs": "file:///etc/passwd"})
    with pytest.raises(TypeError, match="scopes is a list"):
        endpoints(scopes="read:user")


def test_signin_takes_an_issuer_or_oauth_endpoints_not_both() -> None:
    """SignIn(oauth=...) needs no issuer and asks the provider's scopes; both at once,
    neither, or something else as oauth is refused."""
    signin = SignIn(**FACADE, oauth=github())
    assert signin.provider_scopes == ("read:user", "user:email", "read:org")
    assert SignIn(**FACADE, oauth=github(), provider_scopes=["read:user"]).provider_scopes == (
        "read:user",
    )
    with pytest.raises(ValueError, match="not both"):
        SignIn(**FACADE, oauth=github(), issuer="https://github.com")
    with pytest.raises(ValueError, match="issuer must be an http"):
        SignIn(**FACADE)
    with pytest.raises(TypeError, match="oauth is an OAuthProvider"):
        SignIn(**FACADE, oauth="github")  # type: ignore[arg-type]  # refused on purpose


def test_the_provider_of_a_signin_follows_its_form() -> None:
    """An issuer gives a discovered OpenID provider (reading its userinfo unless told not
    to); oauth endpoints give a plain one, whose userinfo is the user and always read."""
    plain = provider_for(SignIn(**FACADE, oauth=github()))
    assert isinstance(plain, PlainOAuthProvider)
    assert plain.issuer == "https://github.com"
    discovered = provider_for(SignIn(**FACADE, issuer="https://login.example"))
    assert type(discovered) is OpenIDProvider
    assert discovered.userinfo
    quiet = SignIn(**FACADE, issuer="https://login.example", provider_userinfo=False)
    assert not provider_for(quiet).userinfo
    with pytest.raises(ValueError, match="always read"):
        SignIn(**FACADE, oauth=github(), provider_userinfo=False)


@pytest.mark.anyio
async def test_a_plain_login_url_has_pkce_and_no_nonce() -> None:
    """The login URL of an OAuth-only provider carries PKCE and the state, not OpenID's nonce."""
    plain = provider_for(SignIn(**FACADE, oauth=github()))
    url = await plain.login_url(state="st", nonce="nn", challenge="ch", redirect="https://cb")
    assert url.startswith("https://github.com/login/oauth/authorize?")
    assert "code_challenge=ch" in url and "state=st" in url
    assert "scope=read%3Auser+user%3Aemail+read%3Aorg" in url
    assert "nonce" not in url
