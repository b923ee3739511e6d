"""Remembered consent: a user who chose it is not asked again for the same client and scopes."""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from authlib.common.security import generate_token
from starlette.requests import Request
from starlette.responses import Response

from mcpfusion._auth.config import hash_api_key
from mcpfusion._auth.signin.store import SignInStore

REMEMBER_COOKIE: Final = "mcpfusion_remember"
"""Names the signed-in user of a browser that chose to remember a consent (HttpOnly)."""


class Consents:
    """The consents users chose to remember, per user, client and scopes.

    A browser that ticked *Remember* gets a cookie naming (by a random key, the store
    holding its hash) the user who signed in with it; that user's consent to a client
    covers later requests of the client for the same scopes or fewer. The provider's
    sign-in still happens each time, and a different user signing in there is shown the
    consent page after all. Revoking a grant of the client (``/oauth/revoke``) forgets the
    user's consent to it; otherwise it lasts ``ttl`` seconds.

    Args:
        store: the sign-in store.
        ttl: seconds a remembered consent lasts; ``0``: never remembered.
        secure: whether the cookie is sent over HTTPS only.
    """

    def __init__(self, store: SignInStore, ttl: int, *, secure: bool) -> None:
        self.store, self.ttl, self.secure = store, ttl, secure

    async def subject(
        self, request: Request, client_id: str, scopes: Collection[str]
    ) -> str | None:
        """The user whose remembered consent covers this request, or ``None`` to ask."""
        cookie = request.cookies.get(REMEMBER_COOKIE)
        if self.ttl == 0 or not cookie:
            return None
        browser = await self.store.get("browser", hash_api_key(cookie))
        if browser is None:
            return None
        consented = await self.store.get("consented", _key(browser["subject"], client_id))
        if consented is None or not set(scopes) <= set(consented["scopes"]):
            return None
        subject: str = browser["subject"]
        return subject

    async def remember(
        self,
        request: Request,
        response: Response,
        *,
        subject: str,
        client_id: str,
        scopes: Collection[str],
    ) -> None:
        """Remembers ``subject``'s consent to ``client_id`` for ``scopes`` (with earlier ones)."""
        if self.ttl == 0:
            return
        cookie = request.cookies.get(REMEMBER_COOKIE) or ""
        browser = await self.store.get("browser", hash_api_key(cookie)) if cookie else None
        if browser is None or browser["subject"] != subject:
            cookie = generate_token(32)
            await self.store.put("browser", hash_api_key(cookie), {"subject": subject}, self.ttl)
        key = _key(subject, client_id)
        earlier = await self.store.get("consented", key)
        every = set(scopes) | set(earlier["scopes"] if earlier is not None else ())
        await self.store.put("consented", key, {"scopes": sorted(every)}, self.ttl)
        response.set_cookie(
            REMEMBER_COOKIE,
            cookie,
            max_age=self.ttl,
            path="/oauth",
            httponly=True,
            samesite="lax",
            secure=self.secure,
        )

    async def forget(self, subject: str, client_id: str) -> None:
        """Forgets ``subject``'s consent to ``client_id``: the next request asks again."""
        await self.store.take("consented", _key(subject, client_id))

    def clear(self, response: Response) -> None:
        """Drops the browser's cookie (another user signed in with it)."""
        response.delete_cookie(REMEMBER_COOKIE, path="/oauth", secure=self.secure, httponly=True)


def _key(subject: str, client_id: str) -> str:
    return hash_api_key(f"{subject}\n{client_id}")
