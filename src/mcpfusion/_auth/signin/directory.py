"""The clients the facade knows: registered ones and documents', a few new ones per address."""

from __future__ import annotations

import math

from starlette.requests import Request
from starlette.responses import Response

from mcpfusion._app.ratelimit import MemoryRateLimitStore, RateLimitStore
from mcpfusion._auth.signin.clients import oauth_error, register
from mcpfusion._auth.signin.config import SignIn
from mcpfusion._auth.signin.documents import ClientDocuments, document_url_allowed, is_document_url
from mcpfusion._auth.signin.store import Record, SignInStore


class Directory:
    """Registers clients and finds them by ``client_id``, limiting new ones per address.

    A registration, and a metadata document fetched (not found in the cache), each take
    one of the address's ``registration_limit`` an hour, from the server's rate-limit
    store: a flood of either from one address stops there, across workers with Redis.

    Args:
        settings: the ``SignIn`` option.
        store: the sign-in store.
        limits: where the per-address buckets live; ``None``: this process's memory.
    """

    def __init__(self, settings: SignIn, store: SignInStore, limits: RateLimitStore | None) -> None:
        self.settings, self.store = settings, store
        self.limits = limits if limits is not None else MemoryRateLimitStore()
        self.documents = (
            ClientDocuments(
                store,
                tls=settings.metadata_documents_tls,
                allow_private=settings.metadata_documents_private,
            )
            if settings.metadata_documents
            else None
        )

    async def register(self, request: Request) -> Response:
        """Dynamic client registration (RFC 7591), a few an hour from one address."""
        wait = await self._take(request)
        if wait > 0:
            answer = oauth_error("temporarily_unavailable", "too many registrations from here", 429)
            answer.headers["Retry-After"] = str(max(1, math.ceil(wait)))
            return answer
        return await register(
            request, self.store, self.settings.client_ttl, self.settings.max_clients
        )

    async def client(self, client_id: str, request: Request) -> Record | None:
        """The client ``client_id`` names: one registered here, or a metadata document's."""
        if not is_document_url(client_id):
            return await self.store.get("client", client_id)
        if self.documents is None or not document_url_allowed(client_id):
            return None
        cached = await self.documents.cached(client_id)
        if cached is not None:
            return cached or None  # {}: its document failed lately
        if await self._take(request) > 0:
            return None  # a flood of document URLs makes no flood of fetches
        return await self.documents.fetch(client_id)

    async def _take(self, request: Request) -> float:
        """Takes one of the address's registrations; the seconds to wait when none is left."""
        burst = self.settings.registration_limit
        address = request.client.host if request.client is not None else "unknown"
        return await self.limits.take(f"signin-register:{address}", burst / 3600, burst)
