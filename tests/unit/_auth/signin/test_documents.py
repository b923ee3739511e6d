"""The rules of client ID metadata documents: which URLs are fetched, which documents used."""

from __future__ import annotations

import pytest

from mcpfusion._auth.signin.documents import DocumentError, client_of, document_url_allowed

URL = "https://app.example.com/oauth/client.json"


@pytest.mark.parametrize(
    "url",
    [URL, "https://app.example.com:8443/c", "https://app.example.com/c?v=1"],
)
def test_https_urls_with_a_path_may_name_a_client(url: str) -> None:
    """An https URL with a host and a path names a document to fetch."""
    assert document_url_allowed(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://app.example.com/c.json",
        "https://app.example.com",
        "https://app.example.com/",
        "https://app.example.com/a/./c.json",
        "https://app.example.com/a/../c.json",
        "https://u:p@app.example.com/c.json",
        "https://app.example.com/c.json#f",
        "https://app.example.com/c\n.json",
    ],
)
def test_urls_the_draft_forbids_are_not_fetched(url: str) -> None:
    """Plain http, no path, dot segments, user info, a fragment or a control character."""
    assert not document_url_allowed(url)


def test_a_document_becomes_a_public_client() -> None:
    """A valid document gives a public client with its redirect URIs, grants and name."""
    client = client_of(
        URL,
        {"client_id": URL, "client_name": "App", "redirect_uris": ["http://127.0.0.1:3/cb"]},
    )
    assert client == {
        "client_id": URL,
        "client_name": "App",
        "redirect_uris": ["http://127.0.0.1:3/cb"],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none",
        "document": True,
    }


@pytest.mark.parametrize(
    ("document", "why"),
    [
        ([], "not a JSON object"),
        ({"client_id": URL + "x", "redirect_uris": ["https://a.example/cb"]}, "client_id"),
        ({"client_id": URL, "redirect_uris": []}, "redirect_uris"),
        ({"client_id": URL, "redirect_uris": ["http://evil.example/cb"]}, "redirect URI"),
        (
            {"client_id": URL, "redirect_uris": ["https://a.example/cb"], "client_secret": "s"},
            "no shared secret",
        ),
        (
            {
                "client_id": URL,
                "redirect_uris": ["https://a.example/cb"],
                "grant_types": ["client_credentials"],
            },
            "grant_types",
        ),
        (
            {"client_id": URL, "redirect_uris": ["https://a.example/cb"], "client_name": ""},
            "client_name",
        ),
    ],
)
def test_a_document_that_does_not_describe_a_public_client_is_refused(
    document: object, why: str
) -> None:
    """Another client_id, bad redirect URIs, a secret, other grants or an empty name."""
    with pytest.raises(DocumentError, match=why):
        client_of(URL, document)
