"""The redirect-URI rules of client registration."""

from __future__ import annotations

import pytest

from mcpfusion._auth.signin.clients import redirect_uri_allowed


@pytest.mark.parametrize(
    "uri",
    [
        "https://claude.ai/api/mcp/auth_callback",
        "http://127.0.0.1:33418/callback",
        "http://localhost:6274/oauth/callback",
        "http://[::1]:8080/cb",
        "com.example.app:/oauth2redirect",
    ],
)
def test_the_redirect_uris_mcp_clients_use_are_allowed(uri: str) -> None:
    """https, http on loopback and a reverse-domain private scheme may be registered."""
    assert redirect_uri_allowed(uri)


@pytest.mark.parametrize(
    "uri",
    [
        "http://evil.example/cb",
        "http://127.0.0.1.evil.example/cb",
        "javascript:alert(1)",
        "data:text/html,x",
        "file:///etc/passwd",
        "https://a.example/cb#x",
        "https://user:pw@a.example/cb",
        "https:///nohost",
        "myapp:/cb",
        "https://a.example/\ncb",
    ],
)
def test_redirect_uris_that_could_leak_a_code_are_refused(uri: str) -> None:
    """Plain http off loopback, script and data schemes, fragments, user info, no host,
    a scheme that is not reverse-domain and control characters are refused."""
    assert not redirect_uri_allowed(uri)
