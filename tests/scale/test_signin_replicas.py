"""Sign-in across two replicas that share only Redis and the signing key."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import anyio
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from mcpfusion.redis import RedisRateLimitStore, RedisSignInStore
from mcpfusion.server import HttpOptions, asgi_app
from tests.e2e.auth_servers import secured_app, serving
from tests.e2e.client_documents import document_server, metadata
from tests.e2e.signin_servers import (
    CLIENT_ID,
    CLIENT_REDIRECT,
    CLIENT_SECRET,
    Stack,
    browser,
    oidc_provider,
    pkce,
    settings_for,
)
from tests.e2e.test_signin import call_tool
from tests.e2e.test_signin_documents import signed_in
from tests.e2e.test_signin_exchange import ledger_app
from tests.scale.services import Redis, cli, free_port, replicas

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.anyio]

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
LIST = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "billing", "arguments": {"action": "list_invoices"}},
}


def signing_key() -> str:
    """A PEM P-256 key, as an operator hands every replica."""
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@pytest.mark.parametrize("oauth_only", [False, True], ids=["openid", "oauth-only"])
async def test_each_step_of_a_sign_in_may_land_on_another_replica(
    redis: Redis, oauth_only: bool
) -> None:
    """Registration on A, authorization on B, the provider's callback on A, the code
    redeemed on B, a call on B, a refresh on A, a revocation on B: then A refuses (401);
    with an OpenID provider and with an OAuth-only one (``github()``)."""
    pem, prefix = signing_key(), f"test-{secrets.token_hex(4)}"
    with anyio.fail_after(120):
        async with oidc_provider() as provider:
            ports: list[int] = []

            def make(port: int) -> Any:
                # Both replicas serve A's public URL, as behind a load balancer.
                resource = f"http://127.0.0.1:{(ports or [port])[0]}/mcp"
                store = RedisSignInStore(redis.url, prefix=prefix)
                settings = settings_for(
                    provider.issuer, resource, oauth_only, signing_key=pem, store=store
                )
                return asgi_app(secured_app(), HttpOptions(signin=settings))

            async with serving(make) as port_a:
                ports.append(port_a)
                async with serving(make) as port_b:
                    await provider.allow(f"http://127.0.0.1:{port_a}/oauth/callback")
                    a = f"http://127.0.0.1:{port_a}"
                    b = f"http://127.0.0.1:{port_b}"
                    stack = Stack(provider.issuer, port_a, settings_for(provider.issuer, a))
                    async with browser(stack) as user:
                        client = await user.register()
                        verifier, challenge = pkce()
                        url = user.authorize_url(client["client_id"], challenge)
                        back = await user.sign_in(url.replace(a, b, 1))
                        form = {
                            "grant_type": "authorization_code",
                            "code": back["code"],
                            "redirect_uri": CLIENT_REDIRECT,
                            "client_id": client["client_id"],
                            "code_verifier": verifier,
                        }
                        tokens = (await user.request("POST", f"{b}/oauth/token", data=form)).json()
                        headers = {
                            **MCP_HEADERS,
                            "Authorization": f"Bearer {tokens['access_token']}",
                        }
                        on_b = await user.request("POST", f"{b}/mcp", headers=headers, json=PING)
                        refresh = {
                            "grant_type": "refresh_token",
                            "refresh_token": tokens["refresh_token"],
                            "client_id": client["client_id"],
                        }
                        renewed = await user.request("POST", f"{a}/oauth/token", data=refresh)
                        revoke = {
                            "token": renewed.json()["refresh_token"],
                            "client_id": client["client_id"],
                        }
                        await user.request("POST", f"{b}/oauth/revoke", data=revoke)
                        on_a = await user.request("POST", f"{a}/mcp", headers=headers, json=PING)
    assert on_b.status_code != 401  # past authorization (a ping outside a session is 400)
    assert renewed.status_code == 200
    assert on_a.status_code == 401


async def test_the_cli_signs_in_across_two_workers_sharing_redis(
    redis: Redis, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``mcpfusion run --workers 2 --redis-url --signin-*``: sign-ins, calls, refreshes and a
    revocation, whichever worker each request reaches, hold together; then 401."""
    port = free_port()  # the resource URL names the port before the server binds it
    mcp = f"http://127.0.0.1:{port}/mcp"
    monkeypatch.setenv("MCPFUSION_SIGNIN_SECRET", CLIENT_SECRET)
    monkeypatch.setenv("MCPFUSION_SIGNIN_KEY", signing_key())
    with anyio.fail_after(180):
        async with oidc_provider() as provider:
            command = cli(
                "tests.e2e.auth_servers:secured_app",
                "--port",
                str(port),
                "--stateless",
                "--json-response",
                "--redis-url",
                redis.url,
                f"--signin-issuer={provider.issuer}",
                f"--signin-client-id={CLIENT_ID}",
                f"--signin-resource={mcp}",
                "--signin-scope=billing:read",
                workers=2,
            )
            with replicas([command], folder):
                await provider.allow(f"http://127.0.0.1:{port}/oauth/callback")
                stack = Stack(provider.issuer, port, settings_for(provider.issuer, mcp))
                async with browser(stack) as user:
                    statuses = []
                    for _ in range(3):
                        client = await user.register()
                        verifier, challenge = pkce()
                        back = await user.sign_in(
                            user.authorize_url(client["client_id"], challenge)
                        )
                        form = {
                            "grant_type": "authorization_code",
                            "code": back["code"],
                            "redirect_uri": CLIENT_REDIRECT,
                            "client_id": client["client_id"],
                            "code_verifier": verifier,
                        }
                        tokens = (await user.token(**form)).json()
                        bearer = {
                            **MCP_HEADERS,
                            "Authorization": f"Bearer {tokens['access_token']}",
                        }
                        for _ in range(4):
                            call = await user.request("POST", mcp, headers=bearer, json=LIST)
                            statuses.append(call.status_code)
                        revoke = {
                            "token": tokens["refresh_token"],
                            "client_id": client["client_id"],
                        }
                        await user.request("POST", f"{stack.base}/oauth/revoke", data=revoke)
                        for _ in range(4):
                            after = await user.request("POST", mcp, headers=bearer, json=LIST)
                            statuses.append(after.status_code)
    assert statuses == ([200] * 4 + [401] * 4) * 3


async def test_replicas_share_the_registration_limit_documents_and_sealed_sign_ins(
    redis: Redis,
) -> None:
    """Two replicas sharing Redis (as ``--redis-url`` sets up): registrations from one
    address count on both (a document fetched is one), a client's metadata document is
    fetched once for both, and a
    sign-in made on A is exchanged for a downstream token on B (its sealed provider token
    opens there)."""
    pem, prefix = signing_key(), f"test-{secrets.token_hex(4)}"
    with anyio.fail_after(120), document_server() as documents:
        async with oidc_provider() as provider:
            ports: list[int] = []

            def make(port: int) -> Any:
                resource = f"http://127.0.0.1:{(ports or [port])[0]}/mcp"
                settings = settings_for(
                    provider.issuer,
                    resource,
                    signing_key=pem,
                    store=RedisSignInStore(redis.url, prefix=prefix),
                    registration_limit=3,
                    metadata_documents_tls=documents.trust,
                    metadata_documents_private=True,
                )
                options = HttpOptions(
                    signin=settings, rate_limit_store=RedisRateLimitStore(redis.url, prefix=prefix)
                )
                return asgi_app(ledger_app(settings), options)

            async with serving(make) as port_a:
                ports.append(port_a)
                async with serving(make) as port_b:
                    await provider.allow(f"http://127.0.0.1:{port_a}/oauth/callback")
                    a = f"http://127.0.0.1:{port_a}"
                    b = f"http://127.0.0.1:{port_b}"
                    stack = Stack(provider.issuer, port_a, settings_for(provider.issuer, a))
                    async with browser(stack) as user:
                        url = documents.put(
                            "/c.json", metadata(documents.url("/c.json"), CLIENT_REDIRECT)
                        )
                        _, challenge = pkce()
                        pages = [
                            await user.request(
                                "GET", user.authorize_url(url, challenge).replace(a, base, 1)
                            )
                            for base in (a, b)
                        ]
                        body = {
                            "redirect_uris": [CLIENT_REDIRECT],
                            "token_endpoint_auth_method": "none",
                        }
                        statuses = [
                            (
                                await user.request("POST", f"{base}/oauth/register", json=body)
                            ).status_code
                            for base in (a, b, a)
                        ]
                        token = (await signed_in(user, url)).json()["access_token"]
                        seen = await call_tool(f"{b}/mcp", token, "ledger", {"action": "whoami"})
    assert statuses == [201, 201, 429]
    assert [page.status_code for page in pages] == [200, 200]
    assert documents.asked == ["/c.json"]
    assert not seen.is_error and seen.content[0].text.startswith("alice@example.com")
