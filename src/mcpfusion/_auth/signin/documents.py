"""Client ID metadata documents: a client named by an HTTPS URL whose document says who it is."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import re
import socket
import ssl
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import anyio
import httpx2

from mcpfusion._auth.signin.clients import MAX_REDIRECT_URIS, redirect_uri_allowed
from mcpfusion._auth.signin.store import Record, SignInStore

logger = logging.getLogger("mcpfusion.auth")

MAX_DOCUMENT_BYTES: Final = 5 * 1024
"""A document larger than this is refused unread (the draft's suggested bound)."""
FETCH_SECONDS: Final = 5.0
"""The whole fetch (resolution, connection, reading) takes at most this long."""
MIN_CACHE_SECONDS: Final = 60
MAX_CACHE_SECONDS: Final = 3600
"""A document is kept ``max-age`` seconds (its ``Cache-Control``) within these bounds."""
DEFAULT_CACHE_SECONDS: Final = 300
FAILED_CACHE_SECONDS: Final = 60
"""A document that could not be used is not fetched again for this long."""
_MAX_AGE: Final = re.compile(r"max-age=(\d{1,9})")
_GRANTS: Final = ("authorization_code", "refresh_token")


def is_document_url(client_id: str) -> bool:
    """Whether ``client_id`` names a metadata document: an HTTPS URL with a path."""
    return client_id.startswith("https://")


def document_url_allowed(url: str) -> bool:
    """Whether ``url`` may be fetched as a client's document (the draft's rules).

    https with a host and a path other than ``/``; no user info, fragment, or ``.`` and
    ``..`` segments, which would make two spellings of one client.
    """
    if len(url) > 2000 or not url.isprintable() or "#" in url:
        return False
    parts = urlsplit(url)
    segments = parts.path.split("/")
    return (
        parts.scheme == "https"
        and bool(parts.hostname)
        and "@" not in parts.netloc
        and parts.path not in ("", "/")
        and not {".", ".."} & set(segments)
    )


class ClientDocuments:
    """Fetches, checks and caches clients' metadata documents for the facade.

    Guarded against server-side request forgery: every address the host resolves to must
    be public (``allow_private``: loopback and private networks too, for tests), the
    connection goes to the address checked (no second resolution an attacker could
    rebind), redirects are not followed, proxies in the environment are not used, and the
    size and the time are bounded. Documents and failures are cached in the sign-in
    store, so every worker sees them.

    Args:
        store: the sign-in store (the cache).
        tls: the certificate authorities a document's server is checked against;
            ``None``: the system's.
        allow_private: fetch from loopback and private addresses too (tests only).
    """

    def __init__(
        self, store: SignInStore, *, tls: ssl.SSLContext | None, allow_private: bool
    ) -> None:
        self.store = store
        self._verify: ssl.SSLContext | bool = tls if tls is not None else True
        self._allow_private = allow_private

    async def cached(self, url: str) -> Record | None:
        """The cached client of ``url``: ``{}`` when its document failed lately, or ``None``."""
        return await self.store.get("document", _key(url))

    async def fetch(self, url: str) -> Record | None:
        """The client ``url``'s document describes, fetched and cached; ``None`` if unusable."""
        try:
            with anyio.fail_after(FETCH_SECONDS):
                document, seconds = await self._get(url)
            client = client_of(url, document)
        except (DocumentError, TimeoutError, httpx2.HTTPError, OSError, ValueError) as exc:
            logger.warning("the client metadata document %s is refused: %s", url, exc)
            await self.store.put("document", _key(url), {}, FAILED_CACHE_SECONDS)
            return None
        await self.store.put("document", _key(url), client, seconds)
        return client

    async def _get(self, url: str) -> tuple[Any, int]:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port or 443
        address = await self._address(host, port)
        target = f"[{address}]" if ":" in address else address
        pinned = parts._replace(netloc=f"{target}:{port}").geturl()
        headers = {"Host": parts.netloc, "Accept": "application/json"}
        async with (
            httpx2.AsyncClient(
                verify=self._verify, trust_env=False, follow_redirects=False
            ) as http,
            http.stream(
                "GET", pinned, headers=headers, extensions={"sni_hostname": host}
            ) as response,
        ):
            if response.status_code != 200:
                raise DocumentError(f"answered {response.status_code} (redirects not followed)")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT_BYTES:
                    raise DocumentError(f"larger than {MAX_DOCUMENT_BYTES} bytes")
            found = _MAX_AGE.search(response.headers.get("cache-control", ""))
        seconds = int(found.group(1)) if found else DEFAULT_CACHE_SECONDS
        return json.loads(bytes(body)), min(max(seconds, MIN_CACHE_SECONDS), MAX_CACHE_SECONDS)

    async def _address(self, host: str, port: int) -> str:
        """The address to connect to: every one ``host`` resolves to must be allowed."""
        found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addresses = [ipaddress.ip_address(str(entry[4][0]).split("%")[0]) for entry in found]
        if not addresses:
            raise DocumentError(f"{host} does not resolve")
        for address in addresses:
            if not (address.is_global or (self._allow_private and _private(address))):
                raise DocumentError(f"{host} resolves to a non-public address")
        return str(addresses[0])


class DocumentError(Exception):
    """A client metadata document that cannot be fetched or does not describe its client."""


def client_of(url: str, document: Any) -> Record:
    """The client a metadata document describes, as the facade keeps registered ones.

    Raises:
        DocumentError: when the document does not name ``url`` as its ``client_id``, or its
            redirect URIs, authentication or grants are not ones a public client may have.
    """
    if not isinstance(document, Mapping):
        raise DocumentError("the document is not a JSON object")
    if document.get("client_id") != url:
        raise DocumentError("its client_id is not the URL it was fetched from")
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not 0 < len(uris) <= MAX_REDIRECT_URIS:
        raise DocumentError(f"redirect_uris holds 1-{MAX_REDIRECT_URIS}")
    if not all(isinstance(u, str) and redirect_uri_allowed(u) for u in uris):
        raise DocumentError("a redirect URI is not https, http on loopback or a private scheme")
    # A document is public: a secret in it, or a method using one, is no secret.
    if document.get("token_endpoint_auth_method", "none") != "none" or "client_secret" in document:
        raise DocumentError("a document's client authenticates with none (no shared secret)")
    grants = document.get("grant_types", list(_GRANTS))
    if not isinstance(grants, list) or not grants or not set(grants) <= set(_GRANTS):
        raise DocumentError(f"grant_types are among {_GRANTS}")
    name = document.get("client_name")
    if name is not None and (not isinstance(name, str) or not 0 < len(name) <= 100):
        raise DocumentError("client_name is a str of 1-100 characters")
    client: Record = {
        "client_id": url,
        "redirect_uris": uris,
        "grant_types": grants,
        "token_endpoint_auth_method": "none",
        "document": True,
    }
    if name is not None:
        client["client_name"] = name
    return client


def _private(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return address.is_loopback or address.is_private


def _key(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()
