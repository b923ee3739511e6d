"""Attacks on the sign-in facade: redirects, replayed codes, PKCE, audiences, consent, floods."""

from __future__ import annotations

import anyio
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from mcpfusion._auth.signin.store import MemoryStore
from mcpfusion._auth.signin.tokens import TokenIssuer
from tests.e2e.signin_servers import CLIENT_REDIRECT, Browser, browser, pkce, signin_stack

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


async def code_for(user: Browser) -> tuple[str, str, str]:
    """A registered client's id, a code the user's sign-in gave it, and its PKCE verifier."""
    client = await user.register()
    verifier, challenge = pkce()
    back = await user.sign_in(user.authorize_url(client["client_id"], challenge))
    return client["client_id"], back["code"], verifier


async def redeem(user: Browser, client_id: str, code: str, verifier: str) -> dict[str, str]:
    """The token endpoint's JSON answer for a code."""
    answer = await user.redeem(client_id, code, verifier)
    found: dict[str, str] = answer.json()
    return found


async def status_with(user: Browser, token: str) -> int:
    """The MCP endpoint's HTTP status for a ping with ``token``."""
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
    response = await user.request("POST", user.stack.mcp, headers=headers, json=PING)
    return response.status_code


async def test_an_unregistered_redirect_uri_is_refused_without_redirecting() -> None:
    """An authorization request naming a redirect URI the client did not register gets a
    400 page: no redirect, no consent ticket, no code."""
    with anyio.fail_after(60):
        async with signin_stack() as stack, browser(stack) as user:
            client = await user.register()
            _, challenge = pkce()
            url = user.authorize_url(
                client["client_id"], challenge, redirect_uri="https://evil.example/steal"
            )
            page = await user.request("GET", url)
    assert page.status_code == 400 and "location" not in page.headers
    assert "ticket" not in page.text and "redirect URI is not registered" in page.text


@pytest.mark.parametrize(
    "uri",
    [
        "http://evil.example/callback",  # plain http off loopback
        "javascript:alert(1)",
        "data:text/html,hi",
        "https://client.example/cb#fragment",
        "https://user@client.example/cb",
    ],
)
async def test_a_dangerous_redirect_uri_cannot_be_registered(uri: str) -> None:
    """Registration refuses redirect URIs that could carry a code elsewhere."""
    with anyio.fail_after(60):
        async with signin_stack() as stack, browser(stack) as user:
            response = await user.request(
                "POST",
                f"{stack.base}/oauth/register",
                json={"redirect_uris": [uri], "token_endpoint_auth_method": "none"},
            )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"


async def test_a_replayed_code_is_refused_and_revokes_what_it_gave() -> None:
    """A code used twice: the second use gets invalid_grant, and the tokens of the first
    stop working (whoever replays it may have stolen it)."""
    with anyio.fail_after(60):
        async with signin_stack() as stack, browser(stack) as user:
            client_id, code, verifier = await code_for(user)
            first = await redeem(user, client_id, code, verifier)
            assert await status_with(user, first["access_token"]) != 401  # past auth
            second = await redeem(user, client_id, code, verifier)
            after = await status_with(user, first["access_token"])
            refresh = await user.token(
                grant_type="refresh_token",
                refresh_token=first["refresh_token"],
                client_id=client_id,
            )
    assert second["error"] == "invalid_grant" and "access_token" not in second
    assert after == 401
    assert refresh.json()["error"] == "invalid_grant"


async def test_a_wrong_pkce_verifier_is_refused_and_spends_the_code() -> None:
    """A code redeemed with another verifier gets invalid_grant, and the right verifier
    cannot use it afterwards."""
    with anyio.fail_after(60):
        async with signin_stack() as stack, browser(stack) as user:
            client_id, code, verifier = await code_for(user)
            wrong, _ = pkce()
            refused = await redeem(user, client_id, code, wrong)
            late = await redeem(user, client_id, code, verifier)
    assert refused == {
        "error": "invalid_grant",
        "error_description": "the PKCE code verifier does not match",
    }
    assert late["error"] == "invalid_grant"


async def test_a_code_of_another_client_is_refused() -> None:
    """A second client holding the first client's code cannot redeem it."""
    with anyio.fail_after(60):
        async with signin_stack() as stack, browser(stack) as user:
            _, code, verifier = await code_for(user)
            thief = await user.register(client_name="Thief")
            answer = await redeem(user, thief["client_id"], code, verifier)
    assert answer["error"] == "invalid_grant" and "access_token" not in answer


async def test_a_token_for_another_resource_is_refused() -> None:
    """A token signed with the facade's own key but for another resource gets 401; asking
    the facade for another resource is refused with invalid_target."""
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    with anyio.fail_after(60):
        async with signin_stack(signing_key=pem) as stack, browser(stack) as user:
            other = TokenIssuer(
                issuer=f"{stack.base}/",
                audience="http://127.0.0.1:1/other-mcp",
                store=MemoryStore(),
                signing_key=pem,
                ttl=300,
            )
            foreign = other.issue(
                subject="alice",
                client_id="someone",
                scopes={"billing:read"},
                grant="g",
                tenant=None,
                claims={},
            )
            status = await status_with(user, foreign)
            client = await user.register()
            _, challenge = pkce()
            url = user.authorize_url(
                client["client_id"], challenge, resource="http://127.0.0.1:1/other-mcp"
            )
            back = await user.request("GET", url)
    assert status == 401
    assert back.status_code == 303 and "error=invalid_target" in back.headers["location"]


async def test_a_sign_in_without_the_consent_page_is_refused() -> None:
    """The consent cannot be skipped: a consent posted by another browser (no cookie), a
    ticket used twice and a provider callback with a forged state all get 400."""
    with anyio.fail_after(60):
        async with signin_stack() as stack, browser(stack) as user, browser(stack) as attacker:
            client = await user.register()
            _, challenge = pkce()
            ticket = await user.consent_ticket(user.authorize_url(client["client_id"], challenge))
            form = {"ticket": ticket, "decision": "allow"}
            cross = await attacker.request("POST", f"{stack.base}/oauth/consent", data=form)
            forged = await user.request("GET", f"{stack.base}/oauth/callback?code=x&state=made-up")
            ticket = await user.consent_ticket(user.authorize_url(client["client_id"], challenge))
            once = await user.request("POST", f"{stack.base}/oauth/consent", data=form)
            form = {"ticket": ticket, "decision": "allow"}
            first = await user.request("POST", f"{stack.base}/oauth/consent", data=form)
            again = await user.request("POST", f"{stack.base}/oauth/consent", data=form)
    assert cross.status_code == 400 and "location" not in cross.headers
    assert forged.status_code == 400 and "location" not in forged.headers
    assert once.status_code == 400  # the first ticket was spent by the refused attempt
    assert first.status_code == 303 and first.headers["location"].startswith(stack.issuer)
    assert again.status_code == 400


async def test_the_consent_page_names_the_client_and_the_scopes_and_cannot_be_framed() -> None:
    """The consent page shows the client's name (escaped) and each scope, and forbids framing."""
    with anyio.fail_after(60):
        async with signin_stack() as stack, browser(stack) as user:
            client = await user.register(client_name="<b>Evil</b> app")
            _, challenge = pkce()
            url = user.authorize_url(
                client["client_id"], challenge, scope="billing:read billing:write"
            )
            page = await user.request("GET", url)
    assert "&lt;b&gt;Evil&lt;/b&gt; app" in page.text and "<b>Evil</b>" not in page.text
    assert "<li>billing:read</li><li>billing:write</li>" in page.text
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]


async def test_a_registration_flood_is_refused_past_the_limit() -> None:
    """Past ``max_clients`` registrations get 429 and the store does not grow."""
    with anyio.fail_after(60):
        async with signin_stack(max_clients=3) as stack, browser(stack) as user:
            for _ in range(3):
                await user.register()
            refused = await user.request(
                "POST",
                f"{stack.base}/oauth/register",
                json={"redirect_uris": [CLIENT_REDIRECT], "token_endpoint_auth_method": "none"},
            )
            big = await user.request(
                "POST",
                f"{stack.base}/oauth/register",
                content=b'{"redirect_uris": ["' + b"a" * 20_000 + b'"]}',
            )
    assert refused.status_code == 429 and refused.json()["error"] == "temporarily_unavailable"
    assert "client_id" not in refused.text
    assert big.status_code == 413


async def test_oversized_forms_are_refused_unread() -> None:
    """A token request or a consent over 16 KiB, or with too many fields, is refused with
    no grant and no server error."""
    with anyio.fail_after(60):
        async with signin_stack() as stack, browser(stack) as user:
            huge = {"grant_type": "client_credentials", "pad": "x" * 20_000}
            token = await user.request("POST", f"{stack.base}/oauth/token", data=huge)
            many = {f"f{i}": "1" for i in range(50)}
            fields = await user.request("POST", f"{stack.base}/oauth/token", data=many)
            consent = await user.request("POST", f"{stack.base}/oauth/consent", data=huge)
    assert token.status_code == 400 and token.json()["error"] == "invalid_request"
    assert fields.status_code == 400 and fields.json()["error"] == "invalid_request"
    assert consent.status_code == 413
