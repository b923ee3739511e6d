"""Sign-in at an OAuth-only provider (GitHub's shapes, from oidc-provider) through the facade."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from tests.e2e.signin_servers import browser, pkce, sdk_client_call, signin_stack
from tests.e2e.test_signin import full_flow, stack_verifier

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


def github_id(login: str) -> str:
    """The numeric id the test provider's ``/user`` gives ``login``, as GitHub's, a str."""
    number = 7
    for char in login:
        number = (number * 31 + ord(char)) % 2**32
    return str(number)


async def test_the_full_flow_with_an_oauth_only_provider_over_stateful_http() -> None:
    """With ``oauth=github(...)`` (no discovery, no ID token, a form-encoded token answer)
    a client registers, the user signs in, the token calls, refreshes, and is revoked."""
    with anyio.fail_after(120):
        async with signin_stack(oauth_only=True) as stack, browser(stack) as user:
            log = await full_flow(user)
    # The provider's login came through GitHub's authorize path, not discovery.
    assert any(line.startswith("GET /login/oauth/authorize?") for line in log)
    assert not any(".well-known/openid-configuration" in line for line in log)


async def test_the_full_flow_with_an_oauth_only_provider_over_stateless_http() -> None:
    """The same flow against a stateless server answering JSON bodies."""
    with anyio.fail_after(120):
        async with signin_stack(oauth_only=True, stateless=True) as stack, browser(stack) as user:
            await full_flow(user)


async def test_the_user_is_read_from_the_providers_api() -> None:
    """The facade's token names GitHub's numeric id as subject, the primary verified
    e-mail of /user/emails, the login as preferred_username, and the tenant from /user/orgs."""
    with anyio.fail_after(120):
        async with signin_stack(oauth_only=True) as stack, browser(stack) as user:
            _, answer = await user.signed_in("carol+globex")
            identity = await stack_verifier(stack, answer.json()["access_token"])
    assert identity.subject == github_id("carol+globex") and identity.tenant == "globex"
    assert identity.claims["email"] == "carol+globex@example.com"
    assert identity.claims["preferred_username"] == "carol+globex"
    # Lists (the raw e-mail and organisation answers) stay out of the facade's token.
    assert "emails" not in identity.claims and "organizations" not in identity.claims


async def test_a_code_the_provider_refuses_with_200_sends_the_client_access_denied() -> None:
    """GitHub answers a bad code with 200 and an ``error`` field: the sign-in fails, the
    client is sent back with ``access_denied`` and no code."""
    with anyio.fail_after(120):
        async with signin_stack(oauth_only=True) as stack, browser(stack) as user:
            client = await user.register()
            _, challenge = pkce()
            ticket = await user.consent_ticket(user.authorize_url(client["client_id"], challenge))
            to_provider = await user.request(
                "POST",
                f"{stack.base}/oauth/consent",
                data={"ticket": ticket, "decision": "allow"},
            )
            state = httpx2.URL(to_provider.headers["location"]).params["state"]
            forged = await user.request(
                "GET", f"{stack.base}/oauth/callback", params={"state": state, "code": "bad"}
            )
    assert forged.status_code == 303
    back = httpx2.URL(forged.headers["location"]).params
    assert back["error"] == "access_denied" and "code" not in back


async def test_the_python_sdks_oauth_client_signs_in_at_an_oauth_only_provider() -> None:
    """The official Python client's own OAuth signs in through the facade in front of the
    GitHub-shaped provider and calls a tool."""
    with anyio.fail_after(120):
        async with signin_stack(oauth_only=True) as stack, browser(stack) as user:
            result, storage = await sdk_client_call(user, "dave")
    assert not result.is_error and "INV-1" in result.content[0].text
    assert storage.tokens is not None and storage.tokens.scope == "billing:read billing:write"
