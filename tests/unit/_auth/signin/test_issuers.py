"""A discovery document's issuer: the one asked for, or Entra's ``{tenantid}`` template."""

from __future__ import annotations

import jwt

from mcpfusion._auth.signin.issuers import IssuerVerifiers, names_issuer

ENTRA = "https://login.microsoftonline.com"
TEMPLATE = f"{ENTRA}/{{tenantid}}/v2.0"


def test_a_template_names_the_multi_tenant_endpoints_only() -> None:
    """``{tenantid}`` stands for common, organizations or consumers, nothing else."""
    for tenant in ("common", "organizations", "consumers"):
        assert names_issuer(TEMPLATE, f"{ENTRA}/{tenant}/v2.0")
    assert not names_issuer(TEMPLATE, f"{ENTRA}/some-tenant/v2.0")
    assert not names_issuer(TEMPLATE, f"{ENTRA}/common/v2.0/")
    assert not names_issuer(TEMPLATE, "https://evil.example/common/v2.0")
    assert not names_issuer(f"{TEMPLATE}/{{tenantid}}", f"{ENTRA}/common/v2.0/common")


def test_without_a_template_the_issuer_is_the_same_string() -> None:
    """A plain issuer must be exactly the one asked for; a missing one names nothing."""
    assert names_issuer("https://accounts.google.com", "https://accounts.google.com")
    assert not names_issuer("https://accounts.google.com/", "https://accounts.google.com")
    assert not names_issuer(None, "https://accounts.google.com")


def test_each_tenant_gets_the_verifier_of_its_own_issuer() -> None:
    """A token's tid picks the issuer it must name; an unusable tid or a non-JWT gets none."""
    verifiers = IssuerVerifiers(issuer=TEMPLATE, client_id="app", jwks_url=f"{ENTRA}/keys")

    def token(claims: dict[str, object]) -> str:
        return jwt.encode(claims, "k" * 32, algorithm="HS256")

    found = verifiers.for_token(token({"tid": "tenant-a"}))
    assert found is not None and found.issuer == f"{ENTRA}/tenant-a/v2.0"
    assert verifiers.for_token(token({"tid": "tenant-a"})) is found
    assert verifiers.for_token(token({"tid": "a/../b"})) is None
    assert verifiers.for_token(token({"tid": 5})) is None
    assert verifiers.for_token(token({})) is None
    assert verifiers.for_token("not a jwt") is None
