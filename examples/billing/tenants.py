"""The billing example's configuration: two tenants, their API keys and their token issuers.

Only hashes of the API keys are kept here (``hash_api_key``): a leaked configuration gives
no key away. The keys themselves were handed to their holders; the demo's are in
``examples/billing/demo_keys.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from examples.billing.seed import MAIN_TENANT, SECOND_TENANT
from mcpfusion import Identity
from mcpfusion.auth import APIKeyVerifier, Auth, JWTVerifier, Verifier, any_of

READ: Final = frozenset({"billing:read"})
WRITE: Final = frozenset({"billing:read", "billing:write"})

AUDIENCE: Final = "billing-mcp"
"""The ``aud`` the issuers put in tokens meant for this server."""


@dataclass(frozen=True)
class Tenant:
    """A customer organisation of the billing service: its keys and its identity provider.

    Attributes:
        id: the tenant id the data is stored under.
        name: who it is.
        issuer: its identity provider (the ``iss`` of its tokens).
        jwks_url: where the provider publishes its signing keys.
        api_keys: stored API key hashes, each with its holder and scopes.
    """

    id: str
    name: str
    issuer: str
    jwks_url: str
    api_keys: dict[str, tuple[str, frozenset[str]]] = field(default_factory=dict)


TENANTS: Final = (
    Tenant(
        MAIN_TENANT,
        "Northwind Hosting",
        issuer="https://id.northwind.example",
        jwks_url="https://id.northwind.example/.well-known/jwks.json",
        api_keys={
            "sha256:4c119f8d708b06b4ebd8bd931564ca582cebe4093c8af5a48cc22c504eb445a6": (
                "northwind-reporting",
                READ,
            ),
            "sha256:966eb952cbfb5074c542617d8bc057cca6868df78db2254430d55e3adf22ed99": (
                "northwind-accounts",
                WRITE,
            ),
        },
    ),
    Tenant(
        SECOND_TENANT,
        "Globex Cloud",
        issuer="https://id.globex.example",
        jwks_url="https://id.globex.example/.well-known/jwks.json",
        api_keys={
            "sha256:38fa03081960d029fbf95ce59f92236f313d4bc0a4e5aebc0c57cddd4f84351d": (
                "globex-reporting",
                READ,
            ),
            "sha256:9e75ddf5d328df6f9fe65c036c3f8edae8f3c9189ebcdc6daa36b42d26eddb0f": (
                "globex-accounts",
                WRITE,
            ),
        },
    ),
)

LOCAL_OPERATOR: Final = Identity("local-operator", scopes=WRITE, tenant=MAIN_TENANT)
"""Who runs the server over stdio: the process owner, acting for the main tenant."""


def verifier(tenants: tuple[Tenant, ...] = TENANTS) -> Verifier:
    """Every tenant's API keys, then every tenant's token issuer; each sets its tenant."""
    keys = APIKeyVerifier(
        {
            stored: Identity(holder, scopes=scopes, tenant=tenant.id)
            for tenant in tenants
            for stored, (holder, scopes) in tenant.api_keys.items()
        }
    )
    issuers = [
        JWTVerifier(
            issuer=tenant.issuer, audience=AUDIENCE, jwks_url=tenant.jwks_url, tenant=tenant.id
        )
        for tenant in tenants
    ]
    return any_of(keys, *issuers)


def auth(resource: str, tenants: tuple[Tenant, ...] = TENANTS) -> Auth:
    """The server's HTTP authorization, for the endpoint at ``resource``."""
    return Auth(
        verifier=verifier(tenants),
        resource=resource,
        authorization_servers=[tenant.issuer for tenant in tenants],
        scopes_supported=sorted(WRITE),
        resource_name="Billing",
    )
