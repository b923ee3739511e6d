"""MCP clients of the facade: dynamic registration (RFC 7591), redirect-URI rules, client auth."""

from __future__ import annotations

import base64
import hmac
import ipaddress
import json
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final
from urllib.parse import unquote, urlsplit

from authlib.common.security import generate_token
from starlette.requests import Request
from starlette.responses import JSONResponse

from mcpfusion._auth.config import hash_api_key
from mcpfusion._auth.signin.store import Record, SignInStore

MAX_METADATA_BYTES: Final = 16 * 1024
"""A registration body larger than this is refused unread."""

MAX_REDIRECT_URIS: Final = 10
AUTH_METHODS: Final = ("none", "client_secret_post", "client_secret_basic")
GRANT_TYPES: Final = ("authorization_code", "refresh_token", "client_credentials")
_PRIVATE_SCHEME: Final = re.compile(r"[a-z][a-z0-9+\-]*(\.[a-z0-9+\-]+)+")
"""A reverse-domain scheme (RFC 8252 §7.1), such as ``com.example.app``: a native app's own."""


def oauth_error(error: str, description: str, status: int = 400) -> JSONResponse:
    """An OAuth error answer (RFC 6749 §5.2), never cached."""
    return JSONResponse(
        {"error": error, "error_description": description},
        status_code=status,
        headers={"Cache-Control": "no-store"},
    )


async def read_body(request: Request, limit: int) -> bytes | None:
    """The request body, or ``None`` once it passes ``limit`` bytes (read no further)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


def redirect_uri_allowed(uri: str) -> bool:
    """Whether a client may register ``uri``: https, http on loopback, or a private scheme.

    No fragment, no user info, and never ``javascript:``, ``data:`` or plain http to a
    host name: a code must only reach the client that asked for it.
    """
    if len(uri) > 2000 or not uri.isprintable():
        return False
    parts = urlsplit(uri)
    if parts.fragment or "#" in uri or "@" in parts.netloc:
        return False
    if parts.scheme == "https":
        return bool(parts.hostname)
    if parts.scheme == "http":
        host = parts.hostname or ""
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False
    return bool(_PRIVATE_SCHEME.fullmatch(parts.scheme)) and bool(parts.path)


async def register(request: Request, store: SignInStore, ttl: int, limit: int) -> JSONResponse:
    """Registers a client from its metadata (RFC 7591); 201 with its ``client_id``."""
    body = await read_body(request, MAX_METADATA_BYTES)
    if body is None:
        return oauth_error("invalid_client_metadata", "the metadata is too large", 413)
    try:
        metadata = json.loads(body)
    except ValueError:
        return oauth_error("invalid_client_metadata", "the body is not JSON")
    if not isinstance(metadata, dict):
        return oauth_error("invalid_client_metadata", "the metadata is a JSON object")
    uris = metadata.get("redirect_uris")
    if not isinstance(uris, list) or not 0 < len(uris) <= MAX_REDIRECT_URIS:
        return oauth_error("invalid_redirect_uri", f"redirect_uris holds 1-{MAX_REDIRECT_URIS}")
    if not all(isinstance(u, str) and redirect_uri_allowed(u) for u in uris):
        return oauth_error(
            "invalid_redirect_uri", "a redirect URI is https, http on loopback or a private scheme"
        )
    method = metadata.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in AUTH_METHODS:
        return oauth_error(
            "invalid_client_metadata", f"token_endpoint_auth_method is {AUTH_METHODS}"
        )
    grants = metadata.get("grant_types", ["authorization_code", "refresh_token"])
    if not isinstance(grants, list) or not set(grants) <= set(GRANT_TYPES) or not grants:
        return oauth_error("invalid_client_metadata", f"grant_types are among {GRANT_TYPES}")
    if "client_credentials" in grants and method == "none":
        return oauth_error("invalid_client_metadata", "client_credentials needs a client secret")
    name = metadata.get("client_name")
    if name is not None and (not isinstance(name, str) or not 0 < len(name) <= 100):
        return oauth_error("invalid_client_metadata", "client_name is a str of 1-100 characters")
    if await store.count("client") >= limit:
        # A flood of registrations cannot grow the store without bound.
        return oauth_error("temporarily_unavailable", "too many registered clients", 429)
    client_id = generate_token(32)
    now = int(time.time())
    answer: dict[str, Any] = {
        "client_id": client_id,
        "client_id_issued_at": now,
        "redirect_uris": uris,
        "grant_types": grants,
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
    }
    if name is not None:
        answer["client_name"] = name
    record: Record = dict(answer)
    if method != "none":
        secret = generate_token(48)
        answer["client_secret"] = secret
        answer["client_secret_expires_at"] = now + ttl
        record["secret_hash"] = hash_api_key(secret)  # kept hashed: a store dump gives none away
    await store.put("client", client_id, record, ttl)
    return JSONResponse(answer, status_code=201, headers={"Cache-Control": "no-store"})


Lookup = Callable[[str, Request], Awaitable[Record | None]]
"""Finds the client a request names by ``client_id``: a registered one, or a metadata
document's."""


def invalid_client(issuer: str) -> JSONResponse:
    """The 401 of a client that failed to authenticate, with the challenge RFC 6749 §5.2 asks."""
    answer = oauth_error("invalid_client", "the client is unknown or its secret wrong", 401)
    answer.headers["WWW-Authenticate"] = f'Basic realm="{issuer}", error="invalid_client"'
    return answer


async def authenticate(form: Mapping[str, str], request: Request, lookup: Lookup) -> Record | None:
    """The client a token or revocation request authenticates as, or ``None``.

    The client must use the method it registered (``token_endpoint_auth_method``) and only
    that one: a confidential client registered for HTTP Basic cannot send its secret in the
    form, a public client cannot send a secret, and a request with two methods is refused
    (RFC 6749 §2.3).
    """
    client_id, secret = form.get("client_id"), form.get("client_secret")
    method = "none" if secret is None else "client_secret_post"
    header = request.headers.get("authorization", "")
    if header[:6].lower() == "basic ":
        if secret is not None:
            return None
        try:
            decoded = base64.b64decode(header[6:], validate=True).decode()
        except ValueError:
            return None
        user, _, password = decoded.partition(":")
        if client_id is not None and client_id != unquote(user):
            return None
        client_id, secret, method = unquote(user), unquote(password), "client_secret_basic"
    elif header:
        return None  # a Bearer or other scheme is no client authentication here
    if not client_id:
        return None
    client = await lookup(client_id, request)
    if client is None or client.get("token_endpoint_auth_method") != method:
        return None
    stored = client.get("secret_hash")
    if method == "none":
        return client if stored is None else None
    if stored is None or secret is None or not hmac.compare_digest(stored, hash_api_key(secret)):
        return None
    return client
