"""Entra ID's shapes against a local Entra-shaped endpoint: tenant issuers and on-behalf-of."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpfusion._auth.signin.provider import OpenIDProvider, ProviderError
from mcpfusion._auth.signin.sealed import Sealer
from mcpfusion._errors import ToolError
from mcpfusion._identity import Identity
from mcpfusion.auth import SignIn, TokenExchange
from tests.e2e.auth_servers import SigningKey, ec_key, serving

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

CLIENT_ID = "6731de76-14a6-49ae-97bc-6eba6914391e"
SECRET = "an-entra-client-secret-for-tests-only"
TENANT_A = str(uuid.UUID(int=0xA))
TENANT_B = str(uuid.UUID(int=0xB))
NONCE = "the-nonce"


@dataclass
class Entra:
    """A local endpoint answering as Entra ID's v2.0 endpoints do, noting token requests."""

    base: str
    key: SigningKey
    requests: list[tuple[dict[str, str], dict[str, str]]] = field(default_factory=list)
    next_id_token: dict[str, Any] = field(default_factory=dict)

    def issuer(self, tenant: str) -> str:
        """The v2.0 issuer of ``tenant`` (or of ``organizations``, ``{tenantid}``)."""
        return f"{self.base}/{tenant}/v2.0"

    def sign_in_as(self, tenant: str, issuer_tenant: str | None = None) -> None:
        """The next code redeemed gives an ID token of ``tenant`` naming ``issuer_tenant``'s
        issuer (its own by default)."""
        now = int(time.time())
        self.next_id_token = {
            "iss": self.issuer(issuer_tenant or tenant),
            "aud": CLIENT_ID,
            "sub": "pairwise-subject",
            "oid": "object-id",
            "tid": tenant,
            "nonce": NONCE,
            "iat": now,
            "nbf": now,
            "exp": now + 3600,
        }


def entra_app(entra: Entra) -> Starlette:
    """Discovery (a ``{tenantid}`` template for the multi-tenant endpoints), keys, token."""

    async def discovery(request: Request) -> Response:
        tenant = request.path_params["tenant"]
        # "elsewhere" serves a template too: one the facade must not accept there.
        templated = tenant in ("common", "organizations", "consumers", "elsewhere")
        return JSONResponse(
            {
                "issuer": entra.issuer("{tenantid}" if templated else tenant),
                "authorization_endpoint": f"{entra.base}/{tenant}/oauth2/v2.0/authorize",
                "token_endpoint": f"{entra.base}/{tenant}/oauth2/v2.0/token",
                "jwks_uri": f"{entra.base}/{tenant}/discovery/v2.0/keys",
                "userinfo_endpoint": f"{entra.base}/oidc/userinfo",
            }
        )

    async def userinfo(_: Request) -> Response:
        # Graph's userinfo refuses a token whose audience is another API, as every one
        # here is (asked for the facade's own API, for on-behalf-of).
        return JSONResponse({"error": "invalid_token"}, status_code=401)

    async def keys(_: Request) -> Response:
        return JSONResponse({"keys": [entra.key.jwk()]})

    async def token(request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        entra.requests.append((form, dict(request.headers)))
        if form.get("grant_type") == "authorization_code":
            return JSONResponse(
                {
                    "token_type": "Bearer",
                    "id_token": entra.key.sign(entra.next_id_token),
                    "access_token": "the-users-token-for-the-facade",
                    "expires_in": 3599,
                }
            )
        if form.get("assertion") != "the-users-token-for-the-facade":
            error = {"error": "invalid_grant", "error_description": "AADSTS50013: bad assertion"}
            return JSONResponse(error, status_code=400)
        return JSONResponse(
            {
                "token_type": "Bearer",
                "scope": form["scope"],
                "expires_in": 3599,
                "ext_expires_in": 3599,
                "access_token": "a-token-for-the-ledger",
            }
        )

    return Starlette(
        routes=[
            Route("/{tenant}/v2.0/.well-known/openid-configuration", discovery),
            Route("/{tenant}/discovery/v2.0/keys", keys),
            Route("/oidc/userinfo", userinfo),
            Route("/{tenant}/oauth2/v2.0/token", token, methods=["POST"]),
        ]
    )


@asynccontextmanager
async def entra_endpoint() -> AsyncIterator[Entra]:
    """The Entra-shaped endpoint on 127.0.0.1."""
    made: list[Entra] = []

    def make(port: int) -> Starlette:
        made.append(Entra(f"http://127.0.0.1:{port}", ec_key("entra-key")))
        return entra_app(made[0])

    async with serving(make) as _:
        yield made[0]


def provider_at(issuer: str, userinfo: bool = False) -> OpenIDProvider:
    """The facade's provider client for ``issuer``, the tenant mapped from ``tid``, the
    userinfo not read unless asked (``SignIn(provider_userinfo=False)``, as for Entra)."""
    return OpenIDProvider(
        issuer=issuer,
        client_id=CLIENT_ID,
        client_secret=SECRET,
        tenant=lambda claims: claims.get("tid"),
        userinfo=userinfo,
    )


async def redeem(provider: OpenIDProvider) -> Identity:
    """The user a code signs in at ``provider``."""
    identity, _ = await provider.redeem(
        code="a-code", verifier="v" * 43, redirect="https://mcp.example/oauth/callback", nonce=NONCE
    )
    return identity


async def test_a_multi_tenant_issuer_verifies_each_tenants_own_issuer() -> None:
    """Behind ``.../organizations/v2.0`` (issuer ``{tenantid}``), users of two tenants sign
    in, each ID token checked against its own tenant's issuer; ``tid`` is the tenant."""
    with anyio.fail_after(60):
        async with entra_endpoint() as entra:
            provider = provider_at(entra.issuer("organizations"))
            entra.sign_in_as(TENANT_A)
            first = await redeem(provider)
            entra.sign_in_as(TENANT_B)
            second = await redeem(provider)
    assert first.tenant == TENANT_A and second.tenant == TENANT_B
    assert first.claims["iss"] == f"{entra.base}/{TENANT_A}/v2.0"


async def test_an_id_token_naming_another_tenants_issuer_is_refused() -> None:
    """A token of tenant A naming tenant B's issuer, a tid that cannot stand in an issuer,
    and a tenant-specific sign-in getting another tenant's token are all refused."""
    with anyio.fail_after(60):
        async with entra_endpoint() as entra:
            provider = provider_at(entra.issuer("organizations"))
            entra.sign_in_as(TENANT_A, issuer_tenant=TENANT_B)
            with pytest.raises(ProviderError, match="does not verify"):
                await redeem(provider)
            entra.sign_in_as("x/../evil")
            with pytest.raises(ProviderError, match="does not verify"):
                await redeem(provider)
            only_a = provider_at(entra.issuer(TENANT_A))
            entra.sign_in_as(TENANT_B)
            with pytest.raises(ProviderError, match="does not verify"):
                await redeem(only_a)
            entra.sign_in_as(TENANT_A)
            assert (await redeem(only_a)).tenant == TENANT_A


async def test_the_userinfo_is_skipped_when_the_providers_token_is_for_another_api() -> None:
    """Asked for the facade's own API (for on-behalf-of), Entra's access token is refused by
    Graph's userinfo: read, it fails the sign-in; with ``provider_userinfo=False`` the
    verified ID token alone signs the user in."""
    with anyio.fail_after(60):
        async with entra_endpoint() as entra:
            entra.sign_in_as(TENANT_A)
            with pytest.raises(ProviderError, match="answered 401"):
                await redeem(provider_at(entra.issuer(TENANT_A), userinfo=True))
            entra.sign_in_as(TENANT_A)
            assert (await redeem(provider_at(entra.issuer(TENANT_A)))).tenant == TENANT_A


async def test_a_discovery_template_off_the_multi_tenant_endpoints_is_refused() -> None:
    """A ``{tenantid}`` issuer is accepted only for ``common``, ``organizations`` and
    ``consumers``; a tenant-specific URL must be named exactly."""
    with anyio.fail_after(60):
        async with entra_endpoint() as entra:
            provider = provider_at(entra.issuer("elsewhere"))
            with pytest.raises(ProviderError, match="names another issuer"):
                await provider.metadata()


async def signed_in(settings: SignIn) -> Identity:
    """A caller signed in through the facade, the provider's token of it kept sealed."""
    assert settings.store is not None
    grant = "a-grant"
    upstream = {"access_token": "the-users-token-for-the-facade"}
    sealed = Sealer(settings.client_secret).seal(upstream, f"upstream:{grant}")
    await settings.store.put("upstream", grant, sealed, 600)
    return Identity("alice", claims={"gid": grant, "iss": settings.issuer_url})


async def test_on_behalf_of_sends_entras_exact_form_and_caches_the_token() -> None:
    """``token_exchange="on_behalf_of"`` posts the jwt-bearer grant with the client in the
    form, the kept token as assertion, ``AUDIENCE/.default`` and requested_token_use; the
    token is cached."""
    with anyio.fail_after(60):
        async with entra_endpoint() as entra:
            settings = SignIn(
                issuer=entra.issuer(TENANT_A),
                client_id=CLIENT_ID,
                client_secret=SECRET,
                resource="https://mcp.example/mcp",
                token_exchange="on_behalf_of",
            )
            exchange = TokenExchange(settings)
            caller = await signed_in(settings)
            token = await exchange.token_for(caller, "api://ledger/")
            again = await exchange.token_for(caller, "api://ledger/")
            scoped = await exchange.token_for(caller, "api://ledger", "api://ledger/read")
    assert token == again == scoped == "a-token-for-the-ledger"
    assert len(entra.requests) == 2
    (form, headers), (scoped_form, _) = entra.requests
    assert form == {
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
        "client_id": CLIENT_ID,
        "client_secret": SECRET,
        "assertion": "the-users-token-for-the-facade",
        "scope": "api://ledger/.default",
        "requested_token_use": "on_behalf_of",
    }
    assert "authorization" not in headers  # one client authentication method, not two
    assert scoped_form["scope"] == "api://ledger/read"


async def test_an_on_behalf_of_refusal_is_auth_required_without_entras_answer() -> None:
    """Entra refusing the assertion becomes AUTH_REQUIRED naming the audience, with
    nothing of Entra's answer or the tokens in it."""
    with anyio.fail_after(60):
        async with entra_endpoint() as entra:
            settings = SignIn(
                issuer=entra.issuer(TENANT_A),
                client_id=CLIENT_ID,
                client_secret=SECRET,
                resource="https://mcp.example/mcp",
                token_exchange="on_behalf_of",
            )
            caller = await signed_in(settings)
            assert settings.store is not None
            forged = Sealer(SECRET).seal({"access_token": "stale"}, "upstream:a-grant")
            await settings.store.put("upstream", "a-grant", forged, 600)
            with pytest.raises(ToolError, match="gave no token for api://ledger") as refused:
                await TokenExchange(settings).token_for(caller, "api://ledger")
    assert refused.value.code == "AUTH_REQUIRED"
    assert "AADSTS" not in str(refused.value) and "stale" not in str(refused.value)
