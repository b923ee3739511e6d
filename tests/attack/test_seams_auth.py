"""Attacks on HTTP authorization: JWKS outages, hostile token fields, leeway, floods, buckets."""

from __future__ import annotations

import base64
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
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpfusion import Identity
from mcpfusion.auth import (
    APIKeyVerifier,
    Auth,
    IntrospectionVerifier,
    JWTVerifier,
    any_of,
    hash_api_key,
)
from mcpfusion.middleware import rate_limit
from tests.e2e.auth_servers import (
    CLIENT_SECRET,
    HEADERS,
    ISSUER,
    LIST,
    READ_KEY,
    IdentityProvider,
    SigningKey,
    claims,
    rsa_key,
    secured_app,
    secured_asgi,
    serving,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


@dataclass
class GatedProvider(IdentityProvider):
    """The test identity provider, whose JWKS endpoint can hang, counting introspections."""

    gate: anyio.Event | None = None
    introspections: int = 0

    def gated(self) -> ASGIApp:
        """Its endpoints; while ``gate`` is set, a JWKS fetch waits for it, then fails."""
        base = self.app()

        async def serve(scope: Scope, receive: Receive, send: Send) -> None:
            path = scope.get("path") if scope["type"] == "http" else None
            if path == "/introspect":
                self.introspections += 1
            if path == "/jwks.json" and self.gate is not None:
                self.jwks_fetches += 1
                await self.gate.wait()
                await Response("down", status_code=500)(scope, receive, send)
                return
            await base(scope, receive, send)

        return serve


@dataclass
class Stack:
    """The identity provider and the secured server, both on 127.0.0.1."""

    idp: GatedProvider
    url: str

    def token(self, key: SigningKey | None = None, **changes: Any) -> str:
        """A JWT of ``key`` (the published one by default), with claim ``changes``."""
        return (key or self.idp.keys[0]).sign(claims(self.url, **changes))

    async def call(self, token: str) -> httpx2.Response:
        """A ``tools/call`` of ``billing/list_invoices`` with ``token`` as bearer token."""
        headers = [(k.encode(), v.encode()) for k, v in HEADERS.items()]
        headers.append((b"Authorization", f"Bearer {token}".encode()))  # any token, as bytes
        async with httpx2.AsyncClient(timeout=60) as http:
            return await http.post(self.url, json=LIST, headers=headers)

    async def outcome(self, token: str) -> str:
        """``ok``, ``RATE_LIMITED`` or the HTTP status of a call with ``token``."""
        response = await self.call(token)
        if response.status_code != 200:
            return str(response.status_code)
        result = response.json()["result"]
        text = result["content"][0]["text"]
        return "RATE_LIMITED" if "RATE_LIMITED" in text else "error" if result["isError"] else "ok"


@asynccontextmanager
async def stack(
    *,
    limited: bool = False,
    jwt: dict[str, Any] | None = None,
    opaque: dict[str, Any] | None = None,
) -> AsyncIterator[Stack]:
    """A secured app behind an API key, JWTs (``jwt`` options) and introspection (``opaque``)."""
    idp = GatedProvider([rsa_key("k1")])
    async with serving(lambda port: idp.gated()) as idp_port:
        idp_url = f"http://127.0.0.1:{idp_port}"

        def make(port: int) -> Any:
            resource = f"http://127.0.0.1:{port}/mcp"
            app = secured_app()
            if limited:
                app.middleware(rate_limit(rate=0.001, burst=1))  # one call, then none for 1000 s
            verifier = any_of(
                APIKeyVerifier(
                    {hash_api_key(READ_KEY): Identity("ci-reader", scopes={"mcp", "billing:read"})}
                ),
                JWTVerifier(
                    issuer=ISSUER,
                    audience=resource,
                    jwks_url=f"{idp_url}/jwks.json",
                    tenant=lambda found: found.get("org"),
                    refresh_seconds=0,
                    **(jwt or {}),
                ),
                IntrospectionVerifier(
                    f"{idp_url}/introspect",
                    client_id="mcp",
                    client_secret=CLIENT_SECRET,
                    **(opaque or {}),
                ),
            )
            auth = Auth(
                verifier=verifier,
                resource=resource,
                authorization_servers=[ISSUER],
                required_scopes=["mcp"],
            )
            return secured_asgi(app, auth)

        async with serving(make) as port:
            yield Stack(idp, f"http://127.0.0.1:{port}/mcp")


async def until(condition: Any) -> None:
    """Waits (bounded by the caller's ``fail_after``) until ``condition()`` holds."""
    while not condition():
        await anyio.sleep(0.02)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def with_header(header: dict[str, Any], body: dict[str, Any]) -> str:
    """A token with this header and body, and a signature of junk."""
    return f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(body).encode())}.{_b64(b'x')}"


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The ERROR records logged (a traceback included)."""
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_hanging_jwks_endpoint_makes_no_request_wait_for_another() -> None:
    """Item 6: a hanging fetch delays no other request; after it fails, the endpoint rests."""
    with anyio.fail_after(60):
        async with stack(jwt={"timeout": 50, "retry_seconds": 3600}) as served:
            assert await served.outcome(served.token()) == "ok"  # the keys are cached
            fetches = served.idp.jwks_fetches
            served.idp.gate = gate = anyio.Event()
            first: list[str] = []

            async def hanging() -> None:
                first.append(await served.outcome(served.token(rsa_key("k7"))))

            async with anyio.create_task_group() as group:
                group.start_soon(hanging)
                await until(lambda: served.idp.jwks_fetches == fetches + 1)
                assert await served.outcome(served.token(rsa_key("k8"))) == "503"
                assert await served.outcome(served.token()) == "ok"
                assert first == []  # answered while the fetch still hangs: nobody waited
                gate.set()
            assert first == ["503"]
            for kid in ("k9", "k10", "k11"):
                assert await served.outcome(served.token(rsa_key(kid))) == "503"
            assert served.idp.jwks_fetches == fetches + 1  # backing off: not asked again
            assert await served.outcome(served.token()) == "ok"


async def test_the_jwks_endpoint_is_asked_again_after_the_back_off() -> None:
    """Item 6: once ``retry_seconds`` passed, a rotated key is fetched and accepted."""
    with anyio.fail_after(60):
        async with stack(jwt={"retry_seconds": 0.2}) as served:
            served.idp.down = True
            rotated = rsa_key("k2")
            assert await served.outcome(served.token(rotated)) == "503"
            served.idp.keys = [rotated]
            served.idp.down = False
            while await served.outcome(served.token(rotated)) != "ok":
                await anyio.sleep(0.05)


@pytest.mark.parametrize("alg", [["RS256"], {"RS256": True}, 256], ids=["list", "dict", "int"])
async def test_an_alg_of_another_type_gets_401_and_no_traceback(
    alg: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Item 14: a JWT whose ``alg`` is not a str: 401, and no ERROR logged."""
    with anyio.fail_after(60), caplog.at_level(logging.INFO):
        async with stack() as served:
            header = {"alg": alg, "typ": "JWT", "kid": "k1"}
            assert await served.outcome(with_header(header, claims(served.url))) == "401"
            assert await served.outcome(served.token()) == "ok"
    assert errors(caplog) == []


@pytest.mark.parametrize(
    "org", [["acme", "globex"], {"id": "acme"}, 7], ids=["list", "dict", "int"]
)
async def test_a_tenant_claim_of_another_type_gets_401_and_no_traceback(
    org: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Item 14: a signed JWT whose tenant claim is not a str: 401, nothing logged as ERROR."""
    with anyio.fail_after(60), caplog.at_level(logging.INFO):
        async with stack() as served:
            assert await served.outcome(served.token(org=org)) == "401"
            assert await served.outcome(served.token()) == "ok"
    assert errors(caplog) == []


async def test_the_documented_exp_leeway_holds_over_http() -> None:
    """Item 19: with the default 30 s leeway, a JWT expired 10 s ago passes, 90 s ago gets 401."""
    with anyio.fail_after(60):
        async with stack() as served:
            now = int(time.time())
            assert await served.outcome(served.token(exp=now - 10)) == "ok"
            assert await served.outcome(served.token(exp=now - 90)) == "401"


async def test_an_expired_token_gets_401_with_no_leeway() -> None:
    """Item 19: ``leeway=0`` refuses a JWT expired 10 s ago."""
    with anyio.fail_after(60):
        async with stack(jwt={"leeway": 0}) as served:
            assert await served.outcome(served.token(exp=int(time.time()) - 10)) == "401"


async def test_an_inactive_token_is_introspected_once() -> None:
    """Item 20: a token the server called inactive is refused again without asking it."""
    with anyio.fail_after(60):
        async with stack(opaque={"inactive_seconds": 3600}) as served:
            for _ in range(3):
                assert await served.outcome("opaque-unknown-token") == "401"
            assert served.idp.introspections == 1


@pytest.mark.parametrize(
    "token", ["a b", "tok%en", "t\u00f6ken", "tok=en", "==", "x" * 8193], ids=repr
)
async def test_a_token_that_cannot_be_valid_is_never_introspected(token: str) -> None:
    """Item 20: a token off the bearer syntax (RFC 6750) or too long is refused unsent."""
    with anyio.fail_after(60):
        async with stack() as served:
            assert await served.outcome(token) == "401"
            assert served.idp.introspections == 0
            served.idp.active["opaque-good"] = {
                "active": True,
                "sub": "svc",
                "scope": "mcp billing:read",
            }
            assert await served.outcome("opaque-good") == "ok"
            assert served.idp.introspections == 1


async def test_an_introspected_subject_does_not_drain_an_api_key_holders_bucket() -> None:
    """Item 12: an introspected ``sub: ci-reader`` and the API key of ci-reader: a bucket each."""
    with anyio.fail_after(60):
        async with stack(limited=True) as served:
            served.idp.active["opaque-reader"] = {
                "active": True,
                "sub": "ci-reader",
                "scope": "mcp billing:read",
            }
            assert await served.outcome("opaque-reader") == "ok"
            assert await served.outcome(READ_KEY) == "ok"
            assert await served.outcome("opaque-reader") == "RATE_LIMITED"
            assert await served.outcome(READ_KEY) == "RATE_LIMITED"


async def test_one_subject_in_two_tenants_has_two_buckets() -> None:
    """Item 12: the same ``sub`` of one issuer in tenants acme and globex: a bucket each."""
    with anyio.fail_after(60):
        async with stack(limited=True) as served:
            assert await served.outcome(served.token(org="acme")) == "ok"
            assert await served.outcome(served.token(org="globex")) == "ok"
            assert await served.outcome(served.token(org="acme")) == "RATE_LIMITED"
