"""Attacks on the sign-in facade's clients: authentication methods, floods, tokens at rest."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest

from mcpfusion._auth.signin.sealed import Sealer
from mcpfusion._auth.signin.store import MemoryStore
from tests.e2e.signin_servers import CLIENT_REDIRECT, Browser, browser, signin_stack

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


async def credentials(user: Browser, method: str) -> tuple[str, str]:
    """A confidential client registered for client_credentials with ``method``: id, secret."""
    client = await user.register(
        grant_types=["client_credentials"], token_endpoint_auth_method=method
    )
    return client["client_id"], client["client_secret"]


async def test_a_client_must_authenticate_as_it_registered() -> None:
    """A secret sent in the form by a Basic client, by Basic for a form client, or both at
    once, and a public client sending a secret, get a 401 invalid_client; the registered
    method gets a token."""
    with anyio.fail_after(60):
        async with signin_stack() as stack, browser(stack) as user:
            token_url = f"{stack.base}/oauth/token"
            grant = {"grant_type": "client_credentials"}
            basic_id, basic_secret = await credentials(user, "client_secret_basic")
            post_id, post_secret = await credentials(user, "client_secret_post")
            public = await user.register()
            answers = {
                "basic in the form": await user.token(
                    **grant, client_id=basic_id, client_secret=basic_secret
                ),
                "post by basic": await user.request(
                    "POST", token_url, data=grant, auth=httpx2.BasicAuth(post_id, post_secret)
                ),
                "both": await user.request(
                    "POST",
                    token_url,
                    data={**grant, "client_id": basic_id, "client_secret": basic_secret},
                    auth=httpx2.BasicAuth(basic_id, basic_secret),
                ),
                "public with a secret": await user.token(
                    grant_type="refresh_token",
                    refresh_token="x",
                    client_id=public["client_id"],
                    client_secret="anything",
                ),
            }
            right_basic = await user.request(
                "POST", token_url, data=grant, auth=httpx2.BasicAuth(basic_id, basic_secret)
            )
            right_post = await user.token(**grant, client_id=post_id, client_secret=post_secret)
    for answer in answers.values():
        assert answer.status_code == 401 and answer.json()["error"] == "invalid_client"
        assert "access_token" not in answer.text
    assert right_basic.status_code == 200 and right_post.status_code == 200


async def test_invalid_client_answers_carry_a_basic_challenge() -> None:
    """A 401 invalid_client from the token and revocation endpoints names the Basic scheme
    and the issuer in WWW-Authenticate (RFC 6749 §5.2), and is not cached."""
    with anyio.fail_after(60):
        async with signin_stack() as stack, browser(stack) as user:
            client_id, _ = await credentials(user, "client_secret_basic")
            wrong = httpx2.BasicAuth(client_id, "not-the-secret")
            token = await user.request(
                "POST",
                f"{stack.base}/oauth/token",
                data={"grant_type": "client_credentials"},
                auth=wrong,
            )
            revoke = await user.request(
                "POST", f"{stack.base}/oauth/revoke", data={"token": "x"}, auth=wrong
            )
    for answer in (token, revoke):
        assert answer.status_code == 401 and answer.json()["error"] == "invalid_client"
        challenge = answer.headers["www-authenticate"]
        assert challenge == f'Basic realm="{stack.base}/", error="invalid_client"'
        assert answer.headers["cache-control"] == "no-store"


async def test_a_registration_flood_from_one_address_is_refused() -> None:
    """Past ``registration_limit`` registrations from one address get 429 with Retry-After
    although the store has room; nothing is registered by them."""
    with anyio.fail_after(60):
        async with signin_stack(registration_limit=2) as stack, browser(stack) as user:
            await user.register()
            await user.register()
            body = {"redirect_uris": [CLIENT_REDIRECT], "token_endpoint_auth_method": "none"}
            refused = await user.request("POST", f"{stack.base}/oauth/register", json=body)
            assert stack.settings.store is not None
            kept = await stack.settings.store.count("client")
    assert refused.status_code == 429 and refused.json()["error"] == "temporarily_unavailable"
    assert int(refused.headers["retry-after"]) >= 1 and "client_id" not in refused.text
    assert kept == 2


def dump(store: MemoryStore) -> str:
    """Everything a memory store holds, as the text a dump of it would show."""
    return json.dumps({kind: list(entries.values()) for kind, entries in store._kinds.items()})


async def test_the_providers_tokens_are_sealed_in_the_store() -> None:
    """After a sign-in and its code's redemption the store holds no provider token in the
    clear: the sealed record opens only with the configuration's key and for its grant."""
    with anyio.fail_after(60):
        async with signin_stack() as stack, browser(stack) as user:
            _, answer = await user.signed_in()
            assert answer.status_code == 200
            store = stack.settings.store
            assert isinstance(store, MemoryStore)
            kept: dict[str, Any] = {
                key: value for key, (_, value) in store._kinds["upstream"].items()
            }
    ((grant, sealed),) = kept.items()
    opened = Sealer(stack.settings.client_secret).open(sealed, f"upstream:{grant}")
    assert opened is not None and isinstance(opened["access_token"], str)
    assert opened["access_token"] not in dump(store)
    assert Sealer("another secret").open(sealed, f"upstream:{grant}") is None
    assert Sealer(stack.settings.client_secret).open(sealed, "upstream:another") is None
