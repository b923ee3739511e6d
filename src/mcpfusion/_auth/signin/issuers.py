"""The issuers of a provider's ID tokens: one, or Entra ID's ``{tenantid}`` template."""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Final

import jwt

from mcpfusion._auth.jwt import JWTVerifier

TEMPLATE: Final = "{tenantid}"
"""Where a multi-tenant discovery document (Entra's ``common``, ``organizations``) puts the
tenant in its issuer."""
TENANT_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,63}")
"""A tenant id that can stand in an issuer URL (Entra's are GUIDs): no ``/``, no ``?``."""
MAX_ISSUERS: Final = 1000


def names_issuer(named: object, issuer: str) -> bool:
    """Whether a discovery document's ``issuer`` is ``issuer``: the same string, or a
    template whose ``{tenantid}`` stands where ``issuer`` names ``common``,
    ``organizations`` or ``consumers`` (Entra's multi-tenant endpoints)."""
    if not isinstance(named, str):
        return False
    if TEMPLATE not in named or named.count(TEMPLATE) != 1:
        return named == issuer
    before, after = named.split(TEMPLATE)
    middle = issuer[len(before) : len(issuer) - len(after)] if after else issuer[len(before) :]
    return (
        issuer.startswith(before)
        and issuer.endswith(after)
        and middle in ("common", "organizations", "consumers")
    )


class IssuerVerifiers:
    """The ``JWTVerifier`` of each issuer a provider's ID tokens may name.

    With a fixed issuer there is one. With a template, an ID token's issuer must be the
    template with the token's own ``tid`` in it (Microsoft's rule for multi-tenant apps):
    a token of tenant A naming tenant B's issuer, or any other, does not verify.

    Args:
        issuer: the discovery document's issuer (a template or not).
        client_id: the ID tokens' audience.
        jwks_url: the provider's keys (the same for every tenant).
    """

    def __init__(self, *, issuer: str, client_id: str, jwks_url: str) -> None:
        self.issuer = issuer
        self._client_id = client_id
        self._jwks_url = jwks_url
        self._verifiers: OrderedDict[str, JWTVerifier] = OrderedDict()

    def for_token(self, token: str) -> JWTVerifier | None:
        """The verifier of ``token``'s issuer, or ``None`` when it names no valid tenant.

        The ``tid`` read here is unverified: it only picks the issuer the signed token
        must then name, so a forged one fails verification.
        """
        issuer = self.issuer
        if TEMPLATE in issuer:
            try:
                tenant = jwt.decode(token, options={"verify_signature": False}).get("tid")
            except jwt.PyJWTError:
                return None
            if not isinstance(tenant, str) or not TENANT_ID.fullmatch(tenant):
                return None
            issuer = issuer.replace(TEMPLATE, tenant)
        found = self._verifiers.get(issuer)
        if found is None:
            found = JWTVerifier(issuer=issuer, audience=self._client_id, jwks_url=self._jwks_url)
            self._verifiers[issuer] = found
            while len(self._verifiers) > MAX_ISSUERS:
                self._verifiers.popitem(last=False)
        self._verifiers.move_to_end(issuer)
        return found
