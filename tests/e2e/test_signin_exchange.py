"""Handlers calling downstream APIs as the signed-in user: ``ctx.token_for`` over HTTP."""

from __future__ import annotations

import anyio
import httpx2
import jwt
import pytest

from mcpfusion import Context, Fusion
from mcpfusion._auth.signin.sealed import Sealer
from mcpfusion.auth import SignIn
from mcpfusion.testing import FusionTester
from tests.e2e.signin_servers import Stack, browser, signin_stack
from tests.e2e.test_signin import call_tool, signed_in_token

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

DOWNSTREAM = "https://ledger.example"
"""The one audience the test provider exchanges tokens for."""


def ledger_app(settings: SignIn) -> Fusion:
    """An app whose tool calls the provider's userinfo with a token from ``ctx.token_for``."""
    app = Fusion("ledger")
    ledger = app.tool("ledger", description="The ledger.")

    @ledger.action(read_only=True)
    async def whoami(ctx: Context, audience: str = DOWNSTREAM) -> str:
        """Who the downstream API sees, and whether a second token came from the cache."""
        token = await ctx.token_for(audience, scopes=["openid"])
        again = await ctx.token_for(audience, scopes=["openid"])
        async with httpx2.AsyncClient(timeout=10) as http:
            seen = await http.get(
                f"{settings.issuer}/me", headers={"Authorization": f"Bearer {token}"}
            )
        return f"{seen.json()['email']} cached={again == token}"

    return app


async def upstream_token(stack: Stack, token: str) -> str:
    """The provider's access token the facade keeps for the grant of ``token``."""
    grant = jwt.decode(token, options={"verify_signature": False})["gid"]
    assert stack.settings.store is not None
    sealed = await stack.settings.store.get("upstream", grant)
    opened = Sealer(stack.settings.client_secret).open(sealed, f"upstream:{grant}")
    assert opened is not None
    found: str = opened["access_token"]
    return found


@pytest.mark.parametrize("stateless", [False, True])
async def test_a_handler_gets_a_token_for_a_downstream_api_with_ctx_token_for(
    stateless: bool,
) -> None:
    """``ctx.token_for`` exchanges the caller's sign-in at the provider (then caches it),
    the downstream API sees the user, and an audience the provider refuses is an
    AUTH_REQUIRED tool error that shows no token; over stateful and stateless HTTP."""
    with anyio.fail_after(120):
        async with (
            signin_stack(app=ledger_app, stateless=stateless) as stack,
            browser(stack) as user,
        ):
            token = await signed_in_token(user)
            seen = await call_tool(stack.mcp, token, "ledger", {"action": "whoami"})
            refused = await call_tool(
                stack.mcp, token, "ledger", {"action": "whoami", "audience": "https://x.example"}
            )
            upstream = await upstream_token(stack, token)
    assert not seen.is_error and seen.content[0].text == "alice@example.com cached=True"
    assert refused.is_error and "AUTH_REQUIRED" in refused.content[0].text
    assert token not in refused.content[0].text and upstream not in refused.content[0].text


async def test_an_expired_provider_token_is_refreshed_before_the_exchange() -> None:
    """When the provider's token of the sign-in has expired (here it lives less than the
    renewal margin) the facade refreshes it at the provider, keeps the new one sealed, and
    the exchange succeeds."""
    with anyio.fail_after(120):
        async with (
            signin_stack(
                app=ledger_app,
                access_seconds=10,
                provider_scopes=("openid", "email", "tenant", "offline_access"),
            ) as stack,
            browser(stack) as user,
        ):
            token = await signed_in_token(user)
            before = await upstream_token(stack, token)
            seen = await call_tool(stack.mcp, token, "ledger", {"action": "whoami"})
            after = await upstream_token(stack, token)
    assert not seen.is_error and seen.content[0].text.startswith("alice@example.com")
    assert after != before


async def test_an_expired_provider_token_without_refresh_is_auth_required() -> None:
    """Without a refresh token from the provider (no offline_access), an expired provider
    token ends downstream calls with AUTH_REQUIRED asking the user to sign in again."""
    with anyio.fail_after(120):
        async with signin_stack(app=ledger_app, access_seconds=10) as stack, browser(stack) as u:
            token = await signed_in_token(u)
            refused = await call_tool(stack.mcp, token, "ledger", {"action": "whoami"})
    assert refused.is_error and "AUTH_REQUIRED" in refused.content[0].text
    assert "identity provider has expired" in refused.content[0].text


async def test_ctx_token_for_without_a_sign_in_is_auth_required() -> None:
    """Served without sign-in (here in-process), ``ctx.token_for`` is AUTH_REQUIRED."""
    app = ledger_app(
        SignIn(
            issuer="https://id.example",
            client_id="c",
            client_secret="s",
            resource="https://mcp.example/mcp",
        )
    )
    async with FusionTester(app) as tester:
        result = await tester.call("ledger", "whoami")
    assert result.is_error and result.error_code == "AUTH_REQUIRED"
    assert "does not sign users in" in result.text
