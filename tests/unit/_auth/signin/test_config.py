"""The SignIn option and its place in HttpOptions."""

from __future__ import annotations

from typing import Any

import pytest

from mcpfusion.auth import APIKeyVerifier, Auth, SignIn
from mcpfusion.server import HttpOptions

SETTINGS: dict[str, Any] = {
    "issuer": "https://login.example",
    "client_id": "facade",
    "client_secret": "s3cret",
    "resource": "https://mcp.example/mcp",
}


def test_the_facade_is_the_resources_origin_and_the_secret_is_hidden() -> None:
    """The facade's issuer is the resource's origin; the repr shows no secret."""
    signin = SignIn(**SETTINGS)
    assert signin.base_url == "https://mcp.example"
    assert "s3cret" not in repr(signin)


def test_malformed_settings_fail_at_definition() -> None:
    """A non-URL issuer, provider scopes without openid and a zero ttl are refused."""
    with pytest.raises(ValueError, match="issuer must be an http"):
        SignIn(**{**SETTINGS, "issuer": "login.example"})
    with pytest.raises(ValueError, match="openid among them"):
        SignIn(**SETTINGS, provider_scopes=("email",))
    with pytest.raises(ValueError, match="token_ttl must be a positive int"):
        SignIn(**SETTINGS, token_ttl=0)


def test_signin_excludes_auth_and_needs_a_shared_key_with_workers() -> None:
    """signin= with auth= is refused, and so are several workers without a signing key."""
    signin = SignIn(**SETTINGS)
    auth = Auth(
        verifier=APIKeyVerifier({}),
        resource=SETTINGS["resource"],
        authorization_servers=[SETTINGS["issuer"]],
    )
    with pytest.raises(ValueError, match="pass auth or signin, not both"):
        HttpOptions(signin=signin, auth=auth)
    with pytest.raises(ValueError, match="needs a signing_key shared by them"):
        HttpOptions(signin=signin, workers=2, stateless=True)
