"""Sign-in through the facade with a real OpenID provider, and the official client calling."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from mcpfusion import Context, Fusion
from mcpfusion.auth import JWTVerifier, SignIn, TokenExchange
from tests.e2e.signin_servers import (
    Browser,
    browser,
    node_client_call,
    node_oauth_script,
    pkce,
    sdk_client_call,
    signin_stack,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def call(url: str, token: str, action: str = "list_invoices", **arguments: Any) -> Any:
    """One ``tools/call`` through the official client, with the bearer token."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        return await client.call_tool("billing", {"action": action, **arguments})


async def full_flow(user: Browser) -> list[str]:
    """Discovery → registration → authorize → sign-in → token → call → refresh → revoke → 401."""
    stack = user.stack
    refused = await user.request("POST", stack.mcp, headers=MCP_HEADERS, json={})
    assert refused.status_code == 401
    challenge_header = refused.headers["www-authenticate"]
    metadata_url = challenge_header.split('resource_metadata="')[1].split('"')[0]
    resource = (await user.request("GET", metadata_url)).json()
    assert resource["authorization_servers"] == [f"{stack.base}/"] or resource[
        "authorization_servers"
    ] == [stack.base]
    server = (
        await user.request("GET", f"{stack.base}/.well-known/oauth-authorization-server")
    ).json()
    assert server["code_challenge_methods_supported"] == ["S256"]
    client = await user.register()
    verifier, challenge = pkce()
    back = await user.sign_in(user.authorize_url(client["client_id"], challenge))
    assert back["state"] == "client-state" and back["iss"] == f"{stack.base}/"
    tokens = (
        await user.redeem(client["client_id"], back["code"], verifier, resource=stack.mcp)
    ).json()
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == "billing:read"
    result = await call(stack.mcp, tokens["access_token"])
    assert not result.is_error and "INV-1" in result.content[0].text
    # The token carries billing:read only: the write action is FORBIDDEN, as the scopes say.
    forbidden = await call(stack.mcp, tokens["access_token"], "mark_paid", invoice_id="INV-1")
    assert forbidden.is_error and "FORBIDDEN" in forbidden.content[0].text
    refreshed = (
        await user.token(
            grant_type="refresh_token",
            refresh_token=tokens["refresh_token"],
            client_id=client["client_id"],
        )
    ).json()
    assert refreshed["refresh_token"] != tokens["refresh_token"]
    assert not (await call(stack.mcp, refreshed["access_token"])).is_error
    revoked = await user.request(
        "POST",
        f"{stack.base}/oauth/revoke",
        data={"token": refreshed["refresh_token"], "client_id": client["client_id"]},
    )
    assert revoked.status_code == 200
    after = await user.request(
        "POST",
        stack.mcp,
        headers={**MCP_HEADERS, "Authorization": f"Bearer {refreshed['access_token']}"},
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
    )
    assert after.status_code == 401
    return user.log


async def test_the_full_sign_in_flow_over_stateful_http() -> None:
    """A client registers, the user signs in at the provider, the token calls, refreshes,
    and after revocation gets 401 (stateful HTTP)."""
    with anyio.fail_after(120):
        async with signin_stack() as stack, browser(stack) as user:
            log = await full_flow(user)
    assert any(line.startswith("POST /oauth/token -> 200") for line in log)


async def test_the_full_sign_in_flow_over_stateless_http() -> None:
    """The same flow against a stateless server answering JSON bodies."""
    with anyio.fail_after(120):
        async with signin_stack(stateless=True) as stack, browser(stack) as user:
            await full_flow(user)


async def test_the_signed_in_identity_carries_the_providers_claims_and_tenant() -> None:
    """The facade's token names the provider's subject, its email and the mapped tenant."""
    with anyio.fail_after(120):
        async with signin_stack() as stack, browser(stack) as user:
            client, answer = await user.signed_in("bob")
            identity = await stack_verifier(stack, answer.json()["access_token"])
    assert identity.subject == "bob" and identity.tenant == "acme"
    assert identity.claims["email"] == "bob@example.com"
    assert identity.client_id == client["client_id"]


async def stack_verifier(stack: Any, token: str) -> Any:
    """The identity the facade's published key proves for ``token`` (the resource's view)."""
    verifier = JWTVerifier(
        issuer=f"{stack.base}/",
        audience=stack.mcp,
        jwks_url=f"{stack.base}/oauth/jwks",
        algorithms=("ES256",),
        tenant=lambda claims: claims.get("tenant"),
    )
    return await verifier.verify(token)


async def test_a_service_client_gets_a_token_with_client_credentials() -> None:
    """A confidential client registered for client_credentials gets a token for itself
    (no user, no refresh token) and calls a tool; a wrong secret gets invalid_client."""
    with anyio.fail_after(120):
        async with signin_stack() as stack, browser(stack) as user:
            service = await user.register(
                client_name="Nightly export",
                grant_types=["client_credentials"],
                token_endpoint_auth_method="client_secret_basic",
            )
            credentials = (service["client_id"], service["client_secret"])
            answer = await user.request(
                "POST",
                f"{stack.base}/oauth/token",
                data={"grant_type": "client_credentials", "scope": "billing:read"},
                auth=httpx2.BasicAuth(*credentials),
            )
            wrong = await user.request(
                "POST",
                f"{stack.base}/oauth/token",
                data={"grant_type": "client_credentials"},
                auth=httpx2.BasicAuth(service["client_id"], "not-the-secret"),
            )
            tokens = answer.json()
            result = await call(stack.mcp, tokens["access_token"])
            identity = await stack_verifier(stack, tokens["access_token"])
    assert "refresh_token" not in tokens and not result.is_error
    assert identity.subject == service["client_id"] == identity.client_id
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"


def ledger_app(settings: SignIn) -> Fusion:
    """An app whose tool calls a downstream API (the provider's userinfo) as the caller."""
    app = Fusion("ledger")
    exchange = TokenExchange(settings)
    ledger = app.tool("ledger", description="The ledger.")

    @ledger.action(read_only=True)
    async def whoami(ctx: Context, audience: str = "https://ledger.example") -> str:
        """Who the downstream API sees."""
        token = await exchange.token_for(ctx.identity, audience)
        again = await exchange.token_for(ctx.identity, audience)
        async with httpx2.AsyncClient(timeout=10) as http:
            seen = await http.get(
                f"{settings.issuer}/me", headers={"Authorization": f"Bearer {token}"}
            )
        return f"{seen.json()['email']} cached={again == token}"

    return app


async def signed_in_token(user: Browser) -> str:
    """An access token of the facade for a user who signed in."""
    _, answer = await user.signed_in(scope="")
    token: str = answer.json()["access_token"]
    return token


async def test_a_tool_calls_a_downstream_api_as_the_user_with_an_exchanged_token() -> None:
    """A handler exchanges the sign-in for a token of the downstream audience (cached), and
    the downstream API sees the signed-in user; another audience is AUTH_REQUIRED."""
    with anyio.fail_after(120):
        async with signin_stack(app=ledger_app) as stack, browser(stack) as user:
            token = await signed_in_token(user)
            seen = await call_tool(stack.mcp, token, "ledger", {"action": "whoami"})
            refused = await call_tool(
                stack.mcp, token, "ledger", {"action": "whoami", "audience": "https://x.example"}
            )
    assert not seen.is_error and seen.content[0].text == "alice@example.com cached=True"
    assert refused.is_error and "AUTH_REQUIRED" in refused.content[0].text
    assert token not in refused.content[0].text


async def call_tool(url: str, token: str, tool: str, arguments: dict[str, Any]) -> Any:
    """A ``tools/call`` of any tool through the official client, with the bearer token."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        return await client.call_tool(tool, arguments)


async def test_the_python_sdks_oauth_client_signs_in_and_calls() -> None:
    """The official Python client's own OAuth (discovery, registration, PKCE, token) signs
    in through the facade, the test's browser doing the consent and the provider's login."""
    with anyio.fail_after(120):
        async with signin_stack() as stack, browser(stack) as user:
            result, storage = await sdk_client_call(user)
    assert not result.is_error and "INV-1" in result.content[0].text
    assert storage.client is not None and storage.client.client_name == "Python SDK client"
    # The SDK asks for the scopes the protected resource metadata advertises, all of them.
    assert storage.tokens is not None and storage.tokens.scope == "billing:read billing:write"


@pytest.mark.parametrize("oauth_only", [False, True], ids=["openid", "oauth-only"])
async def test_the_typescript_sdks_oauth_client_signs_in_and_calls(oauth_only: bool) -> None:
    """The official TypeScript client's own OAuth signs in through the facade (the test's
    browser doing the consent and the provider's login) and calls a tool, with an OpenID
    provider and with an OAuth-only one (``github()`` over GitHub's shapes)."""
    script = node_oauth_script()
    with anyio.fail_after(120):
        async with signin_stack(oauth_only=oauth_only) as stack, browser(stack) as user:
            _, printed = await node_client_call(user, script)
    assert printed["result"].get("isError", False) is False
    assert "INV-1" in printed["result"]["content"][0]["text"]


async def test_the_users_own_rights_bound_the_scopes_a_client_gets() -> None:
    """With ``scopes_of``, a client asking for every scope gets only those the signed-in
    user holds by their claims: consent cannot grant what the user lacks."""

    def rights(claims: Any) -> list[str]:
        return ["billing:read"] if claims.get("sub") == "alice" else []

    with anyio.fail_after(120):
        async with signin_stack(scopes_of=rights) as stack, browser(stack) as user:
            _, answer = await user.signed_in(scope="billing:read billing:write")
    assert answer.json()["scope"] == "billing:read"
