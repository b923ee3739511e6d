"""HTTP authorization: the ``Auth`` option and the token verifiers.

    from mcpfusion.auth import Auth, JWTVerifier

    auth = Auth(
        verifier=JWTVerifier(issuer=ISSUER, audience=URL, jwks_url=f"{ISSUER}/jwks.json"),
        resource=URL,
        authorization_servers=[ISSUER],
    )
    app.run("http", auth=auth)

Importing this module loads PyJWT and the HTTP client; ``import mcpfusion`` does not.
"""

from mcpfusion._auth.config import (
    MAX_TOKEN_CHARS,
    APIKeyVerifier,
    Auth,
    Verifier,
    VerifierUnavailable,
    any_of,
    hash_api_key,
)
from mcpfusion._auth.introspection import IntrospectionVerifier
from mcpfusion._auth.jwt import ALGORITHMS, JWTVerifier
from mcpfusion._auth.signin.config import SignIn
from mcpfusion._auth.signin.endpoints import OAuthProvider, github
from mcpfusion._auth.signin.exchange import TokenExchange

__all__ = [
    "ALGORITHMS",
    "MAX_TOKEN_CHARS",
    "APIKeyVerifier",
    "Auth",
    "IntrospectionVerifier",
    "JWTVerifier",
    "OAuthProvider",
    "SignIn",
    "TokenExchange",
    "Verifier",
    "VerifierUnavailable",
    "any_of",
    "github",
    "hash_api_key",
]
