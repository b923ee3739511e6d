"""The sign-in tests' parts: oidc-provider, the facade served, a browser, the SDKs' OAuth."""

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
from mcp.client import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

from mcpfusion import Fusion
from mcpfusion.auth import SignIn, github
from mcpfusion.server import HttpOptions, asgi_app
from tests.e2e.auth_servers import secured_app, serving
from tests.e2e.servers import HERE, REPO, npm_install, stop
from tests.e2e.test_node_client import SCRATCH as NODE_SCRATCH
from tests.e2e.test_node_client import SDK as NODE_SDK
from tests.e2e.test_node_client import SDK_VERSION as NODE_SDK_VERSION

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

    async def redeem(
        self, client_id: str, code: str, verifier: str, **form: str
    ) -> httpx2.Response:
        """The token request for an authorization ``code`` with its PKCE ``verifier``."""
        return await self.token(
            grant_type="authorization_code",
            code=code,
            redirect_uri=CLIENT_REDIRECT,
            client_id=client_id,
            code_verifier=verifier,
            **form,
        )

    async def signed_in(
        self, login: str = "alice", **params: str
    ) -> tuple[dict[str, Any], httpx2.Response]:
        """Registers a client, signs ``login`` in for it (``params`` change the authorization
        request) and redeems the code: the client and the token endpoint's answer."""
        client = await self.register()
        verifier, challenge = pkce()
        back = await self.sign_in(
            self.authorize_url(client["client_id"], challenge, **params), login
        )
        return client, await self.redeem(client["client_id"], back["code"], verifier)


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


class Remembered:
    """The Python SDK's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens."""
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Stores tokens."""
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The registered client."""
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Stores the registered client."""
        self.client = client_info


async def sdk_client_call(
    user: Browser,
    login: str = "alice",
    *,
    scope: str | None = "billing:read",
    client_metadata_url: str | None = None,
) -> tuple[Any, Remembered]:
    """The official Python client's own OAuth (discovery, registration or its metadata
    document, PKCE, token), ``user``'s browser signing ``login`` in where it is sent, then
    ``billing``'s ``list_invoices``: the call's result and the client's token storage."""
    stack = user.stack
    back: dict[str, str] = {}

    async def redirect(url: str) -> None:
        back.update(await user.sign_in(url, login))

    async def callback() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(
            code=back["code"], state=back.get("state"), iss=back.get("iss")
        )

    metadata = OAuthClientMetadata(
        client_name="Python SDK client",
        redirect_uris=[AnyUrl(CLIENT_REDIRECT)],
        token_endpoint_auth_method="none",
        scope=scope,
    )
    storage = Remembered()
    oauth = OAuthClientProvider(
        stack.mcp, metadata, storage, redirect, callback, client_metadata_url=client_metadata_url
    )
    async with (
        httpx2.AsyncClient(auth=oauth, timeout=30) as http,
        Client(streamable_http_client(stack.mcp, http_client=http)) as client,
    ):
        result = await client.call_tool("billing", {"action": "list_invoices"})
    return result, storage


def node_oauth_script() -> Path:
    """The TypeScript client's OAuth script, beside the TypeScript SDK installed from npm."""
    npm_install(NODE_SCRATCH, NODE_SDK, NODE_SDK_VERSION, "the TypeScript-SDK OAuth test")
    script = NODE_SCRATCH / "node_oauth_client.mjs"
    shutil.copyfile(HERE / "node_oauth_client.mjs", script)
    return script


async def node_client_call(user: Browser, script: Path, *extra: str) -> tuple[Any, Any]:
    """The official TypeScript client's own OAuth (``script``, given ``extra`` arguments),
    ``user``'s browser signing in where it is sent, then ``billing``'s ``list_invoices``:
    what it asked (its ``authorize`` URL) and what it printed (the call's ``result``)."""
    arguments = json.dumps({"action": "list_invoices"})
    command = ["node", str(script), user.stack.mcp, CLIENT_REDIRECT, "billing", arguments, *extra]
    process = subprocess.Popen(
        command,
        cwd=NODE_SCRATCH,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        asked = await read_json(process)
        back = await user.sign_in(asked["authorize"])
        assert process.stdin is not None
        process.stdin.write(back["code"] + "\n")
        process.stdin.flush()
        printed = await read_json(process)
    finally:
        stop(process)
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()
    return asked, printed


async def read_json(process: subprocess.Popen[str]) -> Any:
    """The next line a child process prints, as JSON."""
    assert process.stdout is not None
    text = await anyio.to_thread.run_sync(process.stdout.readline, abandon_on_cancel=True)
    assert text, f"the Node client exited with {process.poll()}"
    return json.loads(text)
