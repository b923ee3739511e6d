"""Clients named by their metadata document's URL (CIMD) signing in through the facade."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest

from tests.e2e.client_documents import Documents, document_server, metadata
from tests.e2e.signin_servers import (
    CLIENT_REDIRECT,
    Browser,
    Stack,
    browser,
    node_client_call,
    node_oauth_script,
    pkce,
    sdk_client_call,
    signin_stack,
)
from tests.e2e.test_signin import call

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


@asynccontextmanager
async def documents_stack(**changes: Any) -> AsyncIterator[tuple[Stack, Documents]]:
    """The facade trusting a document server on 127.0.0.1 (the test-only option on)."""
    with document_server() as documents:
        options = {
            "metadata_documents_tls": documents.trust,
            "metadata_documents_private": True,
            **changes,
        }
        async with signin_stack(**options) as stack:
            yield stack, documents


async def signed_in(user: Browser, client_id: str) -> httpx2.Response:
    """The token endpoint's answer after the user signs in for the client ``client_id``."""
    verifier, challenge = pkce()
    back = await user.sign_in(user.authorize_url(client_id, challenge))
    return await user.redeem(client_id, back["code"], verifier)


async def test_a_client_named_by_its_document_signs_in_calls_and_refreshes() -> None:
    """The metadata advertises documents; a client whose id is its document's URL signs in
    without registering, calls a tool, refreshes; the document was fetched once (cached)
    and the consent page names its host beside its self-asserted name."""
    with anyio.fail_after(120):
        async with documents_stack() as (stack, documents), browser(stack) as user:
            url = documents.url("/clients/mcp.json")
            documents.put("/clients/mcp.json", metadata(url, CLIENT_REDIRECT))
            server = await user.request(
                "GET", f"{stack.base}/.well-known/oauth-authorization-server"
            )
            _, challenge = pkce()
            page = await user.request("GET", user.authorize_url(url, challenge))
            tokens = (await signed_in(user, url)).json()
            result = await call(stack.mcp, tokens["access_token"])
            refreshed = await user.token(
                grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=url
            )
    assert server.json()["client_id_metadata_document_supported"] is True
    assert "<b>Document client (127.0.0.1)</b>" in page.text
    assert not result.is_error and "INV-1" in result.content[0].text
    assert refreshed.status_code == 200
    assert documents.asked == ["/clients/mcp.json"]


@pytest.mark.parametrize(
    ("case", "served"),
    [
        ("another client_id", lambda url: (metadata(url + "x", CLIENT_REDIRECT), 200, {})),
        ("another redirect URI", lambda url: (metadata(url, "https://evil.example/cb"), 200, {})),
        ("a secret", lambda url: (metadata(url, CLIENT_REDIRECT, client_secret="s"), 200, {})),
        (
            "a shared-secret method",
            lambda url: (
                metadata(url, CLIENT_REDIRECT, token_endpoint_auth_method="client_secret_post"),
                200,
                {},
            ),
        ),
        ("a redirect", lambda url: (b"", 302, {"Location": url + "2"})),
        (
            "too large",
            lambda url: (
                b" " * 6000 + json.dumps(metadata(url, CLIENT_REDIRECT)).encode(),
                200,
                {},
            ),
        ),
        ("not JSON", lambda url: (b"<html>", 200, {})),
    ],
)
async def test_a_document_that_does_not_describe_its_client_is_refused(
    case: str, served: Any
) -> None:
    """A document naming another client_id, not listing the redirect URI, holding a secret
    or a shared-secret method, redirecting, too large or not JSON gives no consent page:
    a 400 with no ticket, and the failure is cached (one fetch)."""
    with anyio.fail_after(60):
        async with documents_stack() as (stack, documents), browser(stack) as user:
            url = documents.url("/client.json")
            document, status, headers = served(url)
            documents.put("/client.json", document, status, **headers)
            _, challenge = pkce()
            pages = [await user.request("GET", user.authorize_url(url, challenge)) for _ in "ab"]
    for page in pages:
        assert page.status_code == 400 and "ticket" not in page.text, case
        assert "location" not in page.headers
    assert documents.asked == ["/client.json"]


async def test_documents_on_private_addresses_are_not_fetched_by_default() -> None:
    """Without the test-only option a document URL on 127.0.0.1 is never fetched (SSRF)."""
    with anyio.fail_after(60):
        async with (
            documents_stack(metadata_documents_private=False) as (stack, documents),
            browser(stack) as user,
        ):
            url = documents.put("/c.json", metadata(documents.url("/c.json"), CLIENT_REDIRECT))
            _, challenge = pkce()
            page = await user.request("GET", user.authorize_url(url, challenge))
    assert page.status_code == 400 and documents.asked == []


@pytest.mark.parametrize(
    "client_id",
    [
        "https://127.0.0.1:1/",
        "https://127.0.0.1:1/a/../b.json",
        "https://user@127.0.0.1:1/c.json",
    ],
)
async def test_document_urls_the_draft_forbids_are_not_fetched(client_id: str) -> None:
    """A document URL without a path, with dot segments or user info is refused unfetched."""
    with anyio.fail_after(60):
        async with documents_stack() as (stack, documents), browser(stack) as user:
            _, challenge = pkce()
            page = await user.request("GET", user.authorize_url(client_id, challenge))
    assert page.status_code == 400 and documents.asked == []


async def test_documents_can_be_turned_off() -> None:
    """With ``metadata_documents=False`` the metadata says so and a URL client is unknown."""
    with anyio.fail_after(60):
        async with (
            documents_stack(metadata_documents=False) as (stack, documents),
            browser(stack) as user,
        ):
            url = documents.put("/c.json", metadata(documents.url("/c.json"), CLIENT_REDIRECT))
            server = await user.request(
                "GET", f"{stack.base}/.well-known/oauth-authorization-server"
            )
            _, challenge = pkce()
            page = await user.request("GET", user.authorize_url(url, challenge))
    assert server.json()["client_id_metadata_document_supported"] is False
    assert page.status_code == 400 and documents.asked == []


async def test_the_python_sdks_oauth_client_signs_in_with_its_document() -> None:
    """The official Python client given ``client_metadata_url`` uses it as its client id
    (no registration) and calls a tool after the user signs in."""
    with anyio.fail_after(120):
        async with documents_stack() as (stack, documents), browser(stack) as user:
            url = documents.put("/py.json", metadata(documents.url("/py.json"), CLIENT_REDIRECT))
            result, storage = await sdk_client_call(user, scope=None, client_metadata_url=url)
            registrations = [line for line in user.log if "/oauth/register" in line]
    assert not result.is_error and "INV-1" in result.content[0].text
    assert storage.client is not None and storage.client.client_id == url
    assert registrations == [] and documents.asked == ["/py.json"]


async def test_the_typescript_sdks_oauth_client_signs_in_with_its_document() -> None:
    """The official TypeScript client given ``clientMetadataUrl`` signs in with it as its
    client id (no registration) and calls a tool."""
    script = node_oauth_script()
    with anyio.fail_after(120):
        async with documents_stack() as (stack, documents), browser(stack) as user:
            url = documents.put("/ts.json", metadata(documents.url("/ts.json"), CLIENT_REDIRECT))
            asked, printed = await node_client_call(user, script, url)
    assert printed["result"].get("isError", False) is False
    assert "INV-1" in printed["result"]["content"][0]["text"]
    assert f"client_id={url}" in asked["authorize"].replace("%3A", ":").replace("%2F", "/")
    assert documents.asked == ["/ts.json"]
