"""Remembered consent: per user, client and scopes, forgotten on revocation or another user."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2
import jwt
import pytest

from tests.e2e.signin_servers import CLIENT_REDIRECT, Browser, browser, pkce, signin_stack

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


async def walk(user: Browser, response: httpx2.Response, login: str) -> tuple[str, Any]:
    """Follows the browser until the client gets its answer (``"client"``, its query) or the
    facade asks for consent (``"consent"``, the page), logging ``login`` in at the provider."""
    for _ in range(20):
        if response.is_redirect:
            target = urljoin(str(response.url), response.headers["location"])
            if target.startswith(CLIENT_REDIRECT):
                query = {k: v[0] for k, v in parse_qs(urlsplit(target).query).items()}
                return "client", query
            response = await user.request("GET", target)
            continue
        if 'name="ticket"' in response.text:
            return "consent", response
        form = re.search(r'<form[^>]*action="([^"]+)"', response.text)
        assert response.status_code == 200 and form is not None, response.text
        action = urljoin(str(response.url), form.group(1))
        if 'name="login"' in response.text:
            fields = {"prompt": "login", "login": login, "password": "any"}
        else:
            fields = {"prompt": "consent"}
        response = await user.request("POST", action, data=fields)
    raise AssertionError("the sign-in went nowhere")


async def authorize(
    user: Browser, client_id: str, login: str = "alice", **params: str
) -> tuple[str, Any]:
    """Starts an authorization for ``client_id``: where it ends, as ``walk`` says."""
    _, challenge = pkce()
    response = await user.request("GET", user.authorize_url(client_id, challenge, **params))
    return await walk(user, response, login)


async def consent(
    user: Browser, page: httpx2.Response, login: str = "alice", remember: bool = True
) -> tuple[str, Any]:
    """Allows on the consent ``page`` (ticking *Remember* or not); where it ends."""
    found = re.search(r'name="ticket" value="([^"]+)"', page.text)
    assert found is not None
    form = {"ticket": found.group(1), "decision": "allow"}
    if remember:
        form["remember"] = "yes"
    response = await user.request("POST", f"{user.stack.base}/oauth/consent", data=form)
    return await walk(user, response, login)


def forget_the_provider_session(user: Browser) -> None:
    """Drops the provider's cookies from the browser (the facade's stay): its next visit to
    the provider logs in afresh."""
    for cookie in list(user.http.cookies.jar):
        if not cookie.name.startswith("mcpfusion_"):
            user.http.cookies.delete(cookie.name, domain=cookie.domain, path=cookie.path)


async def test_a_remembered_consent_skips_the_page_for_the_same_client_and_scopes() -> None:
    """After ticking *Remember*, the same user's next sign-in for the same client and the
    same or fewer scopes goes straight to the provider; more scopes, another client or
    another browser see the page again."""
    with anyio.fail_after(120):
        async with signin_stack() as stack, browser(stack) as user, browser(stack) as other:
            client = (await user.register())["client_id"]
            second = (await user.register())["client_id"]
            scopes = "billing:read billing:write"
            kind, page = await authorize(user, client, scope=scopes)
            assert kind == "consent" and 'name="remember"' in page.text
            assert (await consent(user, page))[0] == "client"
            again = await authorize(user, client, scope=scopes)
            fewer = await authorize(user, client, scope="billing:read")
            another_client = await authorize(user, second, scope="billing:read")
            another_browser = await authorize(other, client, scope="billing:read")
    assert again[0] == "client" and "code" in again[1]
    assert fewer[0] == "client" and "code" in fewer[1]
    assert another_client[0] == "consent" and another_browser[0] == "consent"


async def test_a_consent_not_remembered_is_asked_again() -> None:
    """Without the box ticked, the next sign-in shows the consent page again."""
    with anyio.fail_after(120):
        async with signin_stack() as stack, browser(stack) as user:
            client = (await user.register())["client_id"]
            _, page = await authorize(user, client)
            assert (await consent(user, page, remember=False))[0] == "client"
            again = await authorize(user, client)
    assert again[0] == "consent"


async def test_wider_scopes_than_remembered_are_asked_for() -> None:
    """A consent remembered for billing:read does not cover billing:write."""
    with anyio.fail_after(120):
        async with signin_stack() as stack, browser(stack) as user:
            client = (await user.register())["client_id"]
            _, page = await authorize(user, client, scope="billing:read")
            await consent(user, page)
            wider = await authorize(user, client, scope="billing:read billing:write")
    assert wider[0] == "consent"


async def test_revoking_a_grant_forgets_the_consent() -> None:
    """The client revoking its refresh token (signing out) ends the remembered consent: the
    next sign-in asks again."""
    with anyio.fail_after(120):
        async with signin_stack() as stack, browser(stack) as user:
            client = (await user.register())["client_id"]
            verifier, challenge = pkce()
            page = await user.request("GET", user.authorize_url(client, challenge))
            kind, back = await consent(user, page)
            tokens = (await user.redeem(client, back["code"], verifier)).json()
            await user.request(
                "POST",
                f"{stack.base}/oauth/revoke",
                data={"token": tokens["refresh_token"], "client_id": client},
            )
            after = await authorize(user, client)
    assert kind == "client" and after[0] == "consent"


async def test_another_user_at_the_provider_is_asked_for_consent() -> None:
    """When someone else signs in at the provider in a browser that remembers alice's
    consent, the facade shows them the consent page (no code) and drops the cookie; once
    they allow there, the code is theirs."""
    with anyio.fail_after(120):
        async with signin_stack() as stack, browser(stack) as user:
            client = (await user.register())["client_id"]
            _, page = await authorize(user, client)
            await consent(user, page)
            forget_the_provider_session(user)
            verifier, challenge = pkce()
            started = await user.request("GET", user.authorize_url(client, challenge))
            kind, asked = await walk(user, started, "bob")
            dropped = "mcpfusion_remember" not in user.http.cookies
            end, back = await consent(user, asked, login="bob", remember=False)
            answer = await user.redeem(client, back["code"], verifier)
    assert started.is_redirect and kind == "consent" and dropped
    assert end == "client" and answer.status_code == 200
    claims = jwt.decode(answer.json()["access_token"], options={"verify_signature": False})
    assert claims["sub"] == "bob"
