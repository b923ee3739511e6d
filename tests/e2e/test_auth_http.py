"""HTTP authorization over real HTTP: each bad credential gets its status and header, and the
server stays up; good ones reach the app as an identity (the MCP authorization spec)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpfusion.wire import parse
from tests.client_results import first_text
from tests.e2e.auth_servers import (
    HEADERS,
    INTROSPECTED,
    ISSUER,
    LIST,
    READ_KEY,
    REVOKED,
    WRITE_KEY,
    IdentityProvider,
    auth_for,
    claims,
    ec_key,
    ed_key,
    hmac_signed,
    rsa_key,
    secured_app,
    secured_asgi,
    serving,
    unsigned,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


@dataclass
class Stack:
    """The identity provider and the secured server, both on 127.0.0.1."""

    idp: IdentityProvider
    url: str
    resource: str
    metadata_url: str

    def token(self, **changes: Any) -> str:
        """A valid JWT of the provider's first key, with claim ``changes``."""
        return self.idp.keys[0].sign(claims(self.resource, **changes))

    async def post(self, headers: dict[str, str] | None = None, url: str | None = None) -> Any:
        """A ``tools/call`` of ``billing/list_invoices`` with extra ``headers``."""
        async with httpx2.AsyncClient(timeout=10) as http:
            return await http.post(
                url or self.url, json=LIST, headers={**HEADERS, **(headers or {})}
            )

    async def up(self) -> None:
        """A good token still gets its answer: the server survived whatever came before."""
        response = await self.post({"Authorization": f"Bearer {self.token()}"})
        assert response.status_code == 200, response.text
        assert json.loads(response.json()["result"]["content"][0]["text"]) == ["INV-1"]


@pytest.fixture
async def stack() -> AsyncIterator[Stack]:
    """A JWKS/introspection server with generated keys, and the secured app in front of it."""
    idp = IdentityProvider([rsa_key("k1"), ec_key("k2"), ed_key("k3")])
    idp.active[INTROSPECTED] = {
        "active": True,
        "sub": "svc",
        "client_id": "svc",
        "scope": "mcp billing:read",
    }
    async with serving(lambda port: idp.app()) as idp_port:
        idp_url = f"http://127.0.0.1:{idp_port}"

        def make(port: int) -> Any:
            resource = f"http://127.0.0.1:{port}/mcp"
            # Refetching at once (no back-off after a failed fetch): outages end when a test says.
            auth = auth_for(resource, idp_url, refresh_seconds=0, retry_seconds=0)
            return secured_asgi(secured_app(), auth)

        async with serving(make) as port:
            base = f"http://127.0.0.1:{port}"
            metadata = f"{base}/.well-known/oauth-protected-resource/mcp"
            yield Stack(idp, f"{base}/mcp", f"{base}/mcp", metadata)


def assert_401(stack: Stack, response: Any) -> None:
    """401 with a Bearer challenge that points at the protected resource metadata."""
    assert response.status_code == 401, response.text
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{stack.metadata_url}"' in challenge


async def test_protected_resource_metadata_names_the_authorization_server(stack: Stack) -> None:
    """RFC 9728: the metadata is served at its well-known path, without a token."""
    with anyio.fail_after(30):
        async with httpx2.AsyncClient(timeout=10) as http:
            response = await http.get(stack.metadata_url)
    assert response.status_code == 200
    document = response.json()
    assert document["resource"] == stack.resource
    assert document["authorization_servers"] == [f"{ISSUER}/"]
    assert document["bearer_methods_supported"] == ["header"]


async def test_no_token_gets_401_with_the_metadata_url(stack: Stack) -> None:
    """A request without Authorization gets 401 and WWW-Authenticate: Bearer resource_metadata."""
    with anyio.fail_after(30):
        assert_401(stack, await stack.post())
        await stack.up()


@pytest.mark.parametrize(
    "header",
    ["Basic dXNlcjpwYXNz", "Bearer", "Token abc", "Bearer not.a.jwt", "Bearer a b", "Bearer a.b.c"],
)
async def test_malformed_authorization_gets_401(stack: Stack, header: str) -> None:
    """Another scheme, an empty or a garbled bearer token: 401."""
    with anyio.fail_after(30):
        assert_401(stack, await stack.post({"Authorization": header}))
        await stack.up()


async def test_token_in_the_query_string_is_never_read(stack: Stack) -> None:
    """A valid token in the URL is ignored (OAuth 2.1): 401 as without one."""
    with anyio.fail_after(30):
        response = await stack.post(url=f"{stack.url}?access_token={stack.token()}")
        assert_401(stack, response)
        await stack.up()


async def test_a_64_kb_token_is_refused_unread(stack: Stack) -> None:
    """A 64 KB token is refused (the HTTP server's header limit, or 401) and nothing breaks."""
    with anyio.fail_after(30):
        try:
            response = await stack.post({"Authorization": "Bearer " + "a" * 65_536})
        except httpx2.RemoteProtocolError:
            response = None  # the server may close a request whose header it will not read
        if response is not None:
            assert response.status_code in (400, 401, 431), response.text
            if response.status_code == 401:
                assert_401(stack, response)
        await stack.up()


@pytest.mark.parametrize(
    ("case", "changes"),
    [
        ("expired", {"exp": -3600}),
        ("not yet valid", {"nbf": 3600}),
        ("wrong audience", {"aud": "https://elsewhere.example/mcp"}),
        ("wrong issuer", {"iss": "https://evil.example"}),
        ("no subject", {"sub": None}),
    ],
)
async def test_invalid_claims_get_401(stack: Stack, case: str, changes: dict[str, Any]) -> None:
    """Expired, not yet valid (beyond the leeway), another audience or issuer: 401."""
    now = int(time.time())
    relative = {k: now + v if k in ("exp", "nbf") else v for k, v in changes.items()}
    with anyio.fail_after(30):
        assert_401(stack, await stack.post({"Authorization": f"Bearer {stack.token(**relative)}"}))
        await stack.up()


async def test_forged_signature_gets_401(stack: Stack) -> None:
    """A token signed by another key under a published kid: 401."""
    forged = rsa_key("k1").sign(claims(stack.resource))
    with anyio.fail_after(30):
        assert_401(stack, await stack.post({"Authorization": f"Bearer {forged}"}))
        await stack.up()


async def test_alg_none_gets_401(stack: Stack) -> None:
    """An unsigned token (alg: none): 401."""
    token = unsigned(claims(stack.resource), "k1")
    with anyio.fail_after(30):
        assert_401(stack, await stack.post({"Authorization": f"Bearer {token}"}))
        await stack.up()


async def test_hs256_signed_with_the_public_key_gets_401(stack: Stack) -> None:
    """The HS/RS confusion: an HS256 token whose secret is the RSA public key: 401."""
    token = hmac_signed(claims(stack.resource), stack.idp.keys[0].public_pem(), "k1")
    with anyio.fail_after(30):
        assert_401(stack, await stack.post({"Authorization": f"Bearer {token}"}))
        await stack.up()


@pytest.mark.parametrize("index", [0, 1, 2], ids=["RS256", "ES256", "EdDSA"])
async def test_each_algorithm_is_accepted(stack: Stack, index: int) -> None:
    """Tokens signed with RS256, ES256 and EdDSA keys of the JWKS are accepted."""
    token = stack.idp.keys[index].sign(claims(stack.resource))
    with anyio.fail_after(30):
        response = await stack.post({"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text


async def test_a_key_rotated_at_the_jwks_endpoint_is_fetched(stack: Stack) -> None:
    """A token signed with a new kid makes the verifier fetch the JWKS again, and passes."""
    with anyio.fail_after(30):
        await stack.up()
        fetches = stack.idp.jwks_fetches
        stack.idp.keys = [rsa_key("k9")]
        token = stack.idp.keys[0].sign(claims(stack.resource))
        response = await stack.post({"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    assert stack.idp.jwks_fetches == fetches + 1


async def test_a_jwks_endpoint_that_is_down_fails_closed(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    """The JWKS endpoint fails: 503 and a logged error, never access; then service resumes."""
    with anyio.fail_after(30):
        stack.idp.down = True
        token = rsa_key("k7").sign(claims(stack.resource))  # an unknown kid: must fetch
        with caplog.at_level(logging.ERROR, logger="mcpfusion.auth"):
            response = await stack.post({"Authorization": f"Bearer {token}"})
        assert response.status_code == 503, response.text
        assert response.json()["error"] == "temporarily_unavailable"
        assert any("JWKS" in record.getMessage() for record in caplog.records)
        stack.idp.down = False
        await stack.up()


async def test_unknown_api_key_gets_401(stack: Stack) -> None:
    """An API key nobody issued: 401."""
    with anyio.fail_after(30):
        response = await stack.post({"Authorization": "Bearer sk_test_unknown_0000"})
        assert_401(stack, response)
        await stack.up()


async def test_introspected_tokens_active_and_revoked(stack: Stack) -> None:
    """RFC 7662: an active opaque token passes; once revoked it gets 401."""
    with anyio.fail_after(30):
        good = await stack.post({"Authorization": f"Bearer {INTROSPECTED}"})
        assert good.status_code == 200, good.text
        revoked = await stack.post({"Authorization": f"Bearer {REVOKED}"})
        assert_401(stack, revoked)
        del stack.idp.active[INTROSPECTED]  # revoked after use (the test verifier caches 0 s)
        assert_401(stack, await stack.post({"Authorization": f"Bearer {INTROSPECTED}"}))
        await stack.up()


async def test_an_introspection_endpoint_that_is_down_fails_closed(stack: Stack) -> None:
    """The introspection endpoint fails: 503, never access."""
    with anyio.fail_after(30):
        stack.idp.down = True
        response = await stack.post({"Authorization": f"Bearer {INTROSPECTED}"})
        assert response.status_code == 503, response.text
        stack.idp.down = False
        await stack.up()


async def test_a_token_without_the_required_scope_gets_403(stack: Stack) -> None:
    """A valid token lacking the endpoint's required scope: 403 insufficient_scope."""
    with anyio.fail_after(30):
        response = await stack.post(
            {"Authorization": f"Bearer {stack.token(scope='billing:read')}"}
        )
        assert response.status_code == 403
        assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
        await stack.up()


@asynccontextmanager
async def client(stack: Stack, key: str) -> AsyncIterator[Client]:
    """The official client, sending ``key`` as its bearer token."""
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(stack.url, http_client=http)) as connected,
    ):
        yield connected


def actions(tools: list[Any]) -> list[str]:
    """The actions the listed ``billing`` tool offers."""
    (billing,) = tools
    enum: list[str] = billing.input_schema["properties"]["action"]["enum"]
    return enum


async def test_each_caller_lists_only_what_it_may_call(stack: Stack) -> None:
    """tools/list per caller: a read-only key never sees the write action; a writer does."""
    with anyio.fail_after(30):
        async with client(stack, READ_KEY) as reader:
            read_tools = (await reader.list_tools()).tools
        async with client(stack, WRITE_KEY) as writer:
            write_tools = (await writer.list_tools()).tools
    assert actions(read_tools) == ["list_invoices"]
    assert "mark_paid" not in (read_tools[0].description or "")
    assert read_tools[0].annotations is not None and read_tools[0].annotations.read_only_hint
    assert actions(write_tools) == ["list_invoices", "mark_paid"]


async def test_a_direct_call_to_a_hidden_action_is_forbidden(stack: Stack) -> None:
    """Calling the hidden action anyway: FORBIDDEN, naming the missing scope and nothing else."""
    with anyio.fail_after(30):
        async with client(stack, READ_KEY) as reader:
            result = await reader.call_tool("billing", {"action": "mark_paid", "invoice_id": "X"})
    error = parse(result.content).error
    assert result.is_error and error is not None and error.code == "FORBIDDEN"
    assert error.message == (
        "This call needs the scope 'billing:write', which the caller does not have."
    )


async def test_each_call_is_audited_with_its_caller(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    """One audit record per call: who, what, outcome, code; loggable arguments only."""
    with anyio.fail_after(30), caplog.at_level(logging.INFO, logger="mcpfusion.audit"):
        async with client(stack, WRITE_KEY) as writer:
            paid = await writer.call_tool("billing", {"action": "mark_paid", "invoice_id": "INV-1"})
            missing = await writer.call_tool(
                "billing", {"action": "mark_paid", "invoice_id": "INV-2"}
            )
        async with client(stack, READ_KEY) as reader:
            await reader.call_tool("billing", {"action": "mark_paid", "invoice_id": "INV-1"})
    assert first_text(paid) == "paid" and missing.is_error
    records = [r.audit for r in caplog.records if r.name == "mcpfusion.audit"]  # type: ignore[attr-defined]
    summary = [
        (r["subject"], r["action"], r["outcome"], r["code"], r["arguments"]) for r in records
    ]
    assert summary == [
        ("ci-writer", "mark_paid", "ok", None, {"invoice_id": "INV-1"}),
        ("ci-writer", "mark_paid", "error", "NOT_FOUND", {"invoice_id": "INV-2"}),
        ("ci-reader", "mark_paid", "refused", "FORBIDDEN", {}),
    ]
    assert all(r["duration_ms"] >= 0 for r in records)
