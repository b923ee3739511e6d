"""An authorization server for the tests (JWKS and introspection), keys, tokens and a secured app.

Everything runs in the test process: uvicorn on 127.0.0.1, with keys the tests generate.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import jwt
import uvicorn
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpfusion import Fusion, HttpOptions, Identity, ToolError
from mcpfusion.auth import (
    APIKeyVerifier,
    Auth,
    IntrospectionVerifier,
    JWTVerifier,
    any_of,
    hash_api_key,
)
from mcpfusion.middleware import audit_log
from mcpfusion.server import asgi_app

ISSUER = "https://id.test.example"
READ_KEY = "sk_test_read_0123456789abcdef0123456789abcdef"
WRITE_KEY = "sk_test_write_0123456789abcdef0123456789abcdef"
INTROSPECTED = "opaque-active-token"
REVOKED = "opaque-revoked-token"
CLIENT_SECRET = "introspection-secret"

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
"""The headers of a JSON-RPC POST to the MCP endpoint."""

LIST = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "billing", "arguments": {"action": "list_invoices"}},
}
"""A ``billing.list_invoices`` call."""


@dataclass
class SigningKey:
    """A private key, its kid and its algorithm."""

    kid: str
    algorithm: str
    private: Any

    def jwk(self) -> dict[str, Any]:
        """The public JWK the JWKS endpoint publishes."""
        public = self.private.public_key()
        jwk: dict[str, Any] = json.loads(jwt.get_algorithm_by_name(self.algorithm).to_jwk(public))
        return {**jwk, "kid": self.kid, "use": "sig", "alg": self.algorithm}

    def public_pem(self) -> bytes:
        """The public key as PEM."""
        return bytes(
            self.private.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )

    def sign(self, claims: dict[str, Any], **header: Any) -> str:
        """A JWT of ``claims`` signed with this key."""
        headers = {"kid": self.kid, **header}
        return jwt.encode(claims, self.private, algorithm=self.algorithm, headers=headers)


def rsa_key(kid: str) -> SigningKey:
    """A fresh RS256 key."""
    return SigningKey(kid, "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))


def ec_key(kid: str) -> SigningKey:
    """A fresh ES256 key."""
    return SigningKey(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))


def ed_key(kid: str) -> SigningKey:
    """A fresh EdDSA key."""
    return SigningKey(kid, "EdDSA", ed25519.Ed25519PrivateKey.generate())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(claims: dict[str, Any], kid: str) -> str:
    """An ``alg: none`` token."""
    header = _b64(json.dumps({"alg": "none", "typ": "JWT", "kid": kid}).encode())
    return f"{header}.{_b64(json.dumps(claims).encode())}."


def hmac_signed(claims: dict[str, Any], secret: bytes, kid: str) -> str:
    """An HS256 token whose secret is ``secret`` (the RSA public key, in the attack)."""
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode())
    body = _b64(json.dumps(claims).encode())
    signature = hmac.new(secret, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{_b64(signature)}"


@dataclass
class IdentityProvider:
    """The authorization server's state the tests change: published keys, tokens, outages."""

    keys: list[SigningKey]
    down: bool = False
    active: dict[str, dict[str, Any]] = field(default_factory=dict)
    jwks_fetches: int = 0

    def app(self) -> Starlette:
        """Its JWKS and introspection endpoints."""

        async def jwks(request: Request) -> Response:
            self.jwks_fetches += 1
            if self.down:
                return Response("down", status_code=500)
            return JSONResponse({"keys": [key.jwk() for key in self.keys]})

        async def introspect(request: Request) -> Response:
            if self.down:
                return Response("down", status_code=500)
            expected = "Basic " + base64.b64encode(f"mcp:{CLIENT_SECRET}".encode()).decode()
            if request.headers.get("authorization") != expected:
                return JSONResponse({"error": "invalid_client"}, status_code=401)
            token = (await request.form()).get("token")
            answer = self.active.get(str(token))
            return JSONResponse(answer if answer is not None else {"active": False})

        return Starlette(
            routes=[
                Route("/jwks.json", jwks),
                Route("/introspect", introspect, methods=["POST"]),
            ]
        )


def claims(resource: str, **changes: Any) -> dict[str, Any]:
    """Valid access-token claims for ``resource``, with ``changes``."""
    now = int(time.time())
    base = {
        "iss": ISSUER,
        "aud": resource,
        "sub": "user-1",
        "client_id": "agent",
        "scope": "mcp billing:read",
        "iat": now,
        "exp": now + 600,
        "org": "acme",
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def secured_app() -> Fusion:
    """An app with a read action and a write action that needs ``billing:write``."""
    app = Fusion("secured", data_format="json", ui_audience="all", definitions="full")
    billing = app.tool("billing", description="Invoices.", requires={"billing:read"})

    @billing.action(read_only=True)
    async def list_invoices() -> list[str]:
        """List invoices."""
        return ["INV-1"]

    @billing.action(requires={"billing:read", "billing:write"}, loggable=["invoice_id"])
    async def mark_paid(invoice_id: str) -> str:
        """Record a payment."""
        if invoice_id != "INV-1":
            raise ToolError("NOT_FOUND", f"Invoice {invoice_id} does not exist.")
        return "paid"

    app.middleware(audit_log())
    return app


def bound_socket() -> socket.socket:
    """A socket bound to a free port of 127.0.0.1 (kept bound: no race for the port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@asynccontextmanager
async def serving(make: Callable[[int], Any]) -> AsyncIterator[int]:
    """Serves ``make(port)`` with uvicorn in this event loop; yields the port."""
    sock = bound_socket()
    port = sock.getsockname()[1]
    stopped = anyio.Event()
    try:
        server = uvicorn.Server(uvicorn.Config(make(port), log_level="warning", lifespan="on"))

        async def serve() -> None:
            try:
                await server.serve([sock])
            finally:
                stopped.set()

        async with anyio.create_task_group() as group:
            group.start_soon(serve)
            try:
                with anyio.fail_after(10):
                    while not server.started:
                        await anyio.sleep(0.02)
                yield port
            finally:
                server.should_exit = True
                with anyio.move_on_after(10):
                    await stopped.wait()
                group.cancel_scope.cancel()
    finally:
        sock.close()


def auth_for(resource: str, idp_url: str, **jwt_options: Any) -> Auth:
    """The server's authorization: JWTs of ISSUER, two API keys, introspected tokens."""
    keys = APIKeyVerifier(
        {
            hash_api_key(READ_KEY): Identity("ci-reader", scopes={"mcp", "billing:read"}),
            hash_api_key(WRITE_KEY): Identity(
                "ci-writer", scopes={"mcp", "billing:read", "billing:write"}
            ),
        }
    )
    tokens = JWTVerifier(
        issuer=ISSUER,
        audience=resource,
        jwks_url=f"{idp_url}/jwks.json",
        tenant=lambda found: found.get("org"),
        **jwt_options,
    )
    opaque = IntrospectionVerifier(
        f"{idp_url}/introspect", client_id="mcp", client_secret=CLIENT_SECRET, cache_seconds=0
    )
    return Auth(
        verifier=any_of(keys, tokens, opaque),
        resource=resource,
        authorization_servers=[ISSUER],
        required_scopes=["mcp"],
        scopes_supported=["mcp", "billing:read", "billing:write"],
    )


def secured_asgi(app: Fusion, auth: Auth) -> Any:
    """The app over streamable HTTP behind ``auth``."""
    return asgi_app(app, HttpOptions(auth=auth, stateless=True, json_response=True))
