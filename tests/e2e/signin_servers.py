"""The sign-in tests' parts: oidc-provider from npm, the facade served, a user's browser."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import shutil
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2

from mcpfusion import Fusion
from mcpfusion.auth import SignIn, github
from mcpfusion.server import HttpOptions, asgi_app
from tests.e2e.auth_servers import secured_app, serving
from tests.e2e.servers import HERE, REPO, npm_install, stop

PACKAGE = "oidc-provider"
VERSION = "9.13.3"
"""Pinned: the newest release when these tests were written (certified OpenID provider)."""
SCRATCH = REPO / ".e2e-oidc"
CLIENT_ID = "mcpfusion-facade"
CLIENT_SECRET = "a-provider-client-secret-for-tests-only"
CLIENT_REDIRECT = "http://127.0.0.1:9/callback"
"""The MCP client's registered redirect URI: the test reads the code from it, never follows."""
SCOPES = ("billing:read", "billing:write")


def provider_script() -> Path:
    """The provider's script, beside oidc-provider installed from npm into ``.e2e-oidc/``."""
    npm_install(SCRATCH, PACKAGE, VERSION, "the sign-in tests' OpenID provider")
    script = SCRATCH / "oidc_provider.mjs"
    shutil.copyfile(HERE / "oidc_provider.mjs", script)
    return script


@dataclass
class Stack:
    """A running provider and facade: their URLs, and the settings the facade runs with."""

    issuer: str
    port: int
    settings: SignIn

    @property
    def base(self) -> str:
        """The facade's origin (its issuer)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def mcp(self) -> str:
        """The MCP endpoint."""
        return f"{self.base}/mcp"


async def _line(process: subprocess.Popen[str]) -> dict[str, Any]:
    assert process.stdout is not None
    with anyio.fail_after(30):
        text = await anyio.to_thread.run_sync(process.stdout.readline, abandon_on_cancel=True)
    if not text:
        raise RuntimeError(f"the OpenID provider exited with {process.poll()}")
    found: dict[str, Any] = json.loads(text)
    return found


@dataclass
class Provider:
    """The running oidc-provider: its issuer, and how to tell it the facade's callback."""

    issuer: str
    process: subprocess.Popen[str]

    async def allow(self, callback: str) -> None:
        """Registers ``callback`` as the facade client's redirect URI; waits until ready."""
        assert self.process.stdin is not None
        self.process.stdin.write(f"{callback}\n")
        self.process.stdin.flush()
        assert (await _line(self.process)) == {"ready": True}


@asynccontextmanager
async def oidc_provider(access_seconds: int | None = None) -> AsyncIterator[Provider]:
    """oidc-provider on a free port of 127.0.0.1, stopped at the end; its access tokens
    live ``access_seconds`` when given (its default otherwise)."""
    script = provider_script()
    lifetime = [] if access_seconds is None else [str(access_seconds)]
    process = subprocess.Popen(
        ["node", str(script), CLIENT_ID, CLIENT_SECRET, *lifetime],
        cwd=SCRATCH,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        yield Provider((await _line(process))["issuer"], process)
    finally:
        stop(process)
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()


def settings_for(issuer: str, resource: str, oauth_only: bool = False, **changes: Any) -> SignIn:
    """The facade's settings in these tests: the provider's tenant claim, two scopes; with
    ``oauth_only``, the ``github()`` recipe over the provider's GitHub-shaped endpoints
    (no OpenID Connect: the tenant is the user's first organisation)."""
    defaults: dict[str, Any] = {
        "scopes_supported": SCOPES,
        "tenant": lambda claims: claims.get("tenant"),
        "provider_scopes": ("openid", "email", "tenant"),
    }
    if oauth_only:
        defaults = {
            "scopes_supported": SCOPES,
            "tenant": lambda claims: next(iter(claims["orgs"]), None),
            "oauth": github(api=issuer, web=issuer),
        }
    return SignIn(
        issuer="" if oauth_only else issuer,
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        resource=resource,
        **{**defaults, **changes},
    )


@asynccontextmanager
async def signin_stack(
    *,
    stateless: bool = False,
    app: Callable[[SignIn], Fusion] | None = None,
    access_seconds: int | None = None,
    oauth_only: bool = False,
    **changes: Any,
) -> AsyncIterator[Stack]:
    """oidc-provider and an app (the secured app by default) behind a ``SignIn`` facade,
    both on 127.0.0.1 (``oauth_only``: signing in at its GitHub-shaped OAuth endpoints)."""
    async with oidc_provider(access_seconds) as provider:
        made: list[SignIn] = []

        def make(port: int) -> Any:
            resource = f"http://127.0.0.1:{port}/mcp"
            settings = settings_for(provider.issuer, resource, oauth_only, **changes)
            made.append(settings)
            options = HttpOptions(signin=settings, stateless=stateless, json_response=stateless)
            return asgi_app(secured_app() if app is None else app(settings), options)

        async with serving(make) as port:
            await provider.allow(f"http://127.0.0.1:{port}/oauth/callback")
            yield Stack(provider.issuer, port, made[0])


def pkce() -> tuple[str, str]:
    """A PKCE verifier and its S256 challenge, computed here independently of the server."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@dataclass
class Browser:
    """What an MCP client and its user's browser do: HTTP with a cookie jar, no auto-redirect."""

    http: httpx2.AsyncClient
    stack: Stack
    log: list[str] = field(default_factory=list)

    async def request(self, method: str, url: str, **kwargs: Any) -> httpx2.Response:
        """One HTTP exchange, noted (redacted) in ``log``."""
        response = await self.http.request(method, url, **kwargs)
        self.log.append(f"{method} {_redacted(url)} -> {response.status_code}")
        return response

    async def register(self, **metadata: Any) -> dict[str, Any]:
        """Dynamic client registration; the registered client."""
        body = {
            "client_name": "Test MCP client",
            "redirect_uris": [CLIENT_REDIRECT],
            "token_endpoint_auth_method": "none",
            **metadata,
        }
        response = await self.request("POST", f"{self.stack.base}/oauth/register", json=body)
        assert response.status_code == 201, response.text
        found: dict[str, Any] = response.json()
        return found

    def authorize_url(self, client_id: str, challenge: str, **params: str) -> str:
        """The authorization request URL a client sends the user to."""
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": CLIENT_REDIRECT,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "client-state",
            "scope": "billing:read",
            "resource": self.stack.mcp,
            **params,
        }
        return str(httpx2.URL(f"{self.stack.base}/oauth/authorize", params=query))

    async def consent_ticket(self, url: str) -> str:
        """Opens the consent page; its one-time ticket."""
        page = await self.request("GET", url)
        assert page.status_code == 200, page.text
        found = re.search(r'name="ticket" value="([^"]+)"', page.text)
        assert found is not None
        return found.group(1)

    async def sign_in(self, url: str, user: str = "alice") -> dict[str, str]:
        """Consents, logs in at the provider, consents there; the client's redirect query."""
        ticket = await self.consent_ticket(url)
        response = await self.request(
            "POST", f"{self.stack.base}/oauth/consent", data={"ticket": ticket, "decision": "allow"}
        )
        return await self.follow(response, user)

    async def follow(self, response: httpx2.Response, user: str = "alice") -> dict[str, str]:
        """Follows redirects through the provider's pages to the client's redirect URI."""
        for _ in range(20):
            if response.is_redirect:
                target = urljoin(str(response.url), response.headers["location"])
                if target.startswith(CLIENT_REDIRECT):
                    return {k: v[0] for k, v in parse_qs(urlsplit(target).query).items()}
                response = await self.request("GET", target)
                continue
            form = re.search(r'<form[^>]*action="([^"]+)"', response.text)
            assert response.status_code == 200 and form is not None, response.text
            action = urljoin(str(response.url), form.group(1))
            if 'name="login"' in response.text:
                fields = {"prompt": "login", "login": user, "password": "any"}
            else:
                fields = {"prompt": "consent"}
            response = await self.request("POST", action, data=fields)
        raise AssertionError("the sign-in did not come back to the client")

    async def token(self, **form: str) -> httpx2.Response:
        """A token request."""
        return await self.request("POST", f"{self.stack.base}/oauth/token", data=form)


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    shown = "&".join(
        f"{k}=…" if k in {"code", "state", "code_challenge", "nonce"} else f"{k}={v[0]}"
        for k, v in query.items()
    )
    return f"{parts.path}{'?' + shown if shown else ''}"


@asynccontextmanager
async def browser(stack: Stack) -> AsyncIterator[Browser]:
    """A browser for ``stack``: its own cookie jar."""
    async with httpx2.AsyncClient(timeout=30) as http:
        yield Browser(http, stack)
