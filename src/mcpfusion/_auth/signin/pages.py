"""The facade's pages and redirects: the consent page, refusals, the way back to a client."""

from __future__ import annotations

import hmac
import html
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import urlencode, urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from mcpfusion._auth.signin.store import Record

COOKIE: Final = "mcpfusion_signin"
"""Binds a sign-in to the browser that saw the consent page (SameSite=Lax, HttpOnly)."""
REMEMBER_BOX: Final = (
    '<p><label><input type="checkbox" name="remember" value="yes"> '
    "Remember my decision for this application</label></p>"
)
PAGE_HEADERS: Final = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "form-action 'self'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


def consent_page(
    client: Record,
    redirect: str,
    scopes: Sequence[str],
    ticket: str,
    base: str,
    remember: bool,
) -> HTMLResponse:
    """The page asking the user to allow ``client`` the ``scopes``, its form posting ``ticket``
    (with a *Remember* box when ``remember``)."""
    name = client.get("client_name") or client["client_id"]
    if client.get("document"):
        # Anyone can write any name in a document; its host is what the user can judge.
        name = f"{name} ({urlsplit(client['client_id']).hostname})"
    listed = "".join(f"<li>{html.escape(s)}</li>" for s in scopes) or "<li>none</li>"
    body = (
        f"<p><b>{html.escape(name)}</b> asks to use this server as you.</p>"
        f"<p>It will get back to {html.escape(redirect)} with these scopes:</p>"
        f"<ul>{listed}</ul>"
        f'<form method="post" action="{base}/oauth/consent">'
        f'<input type="hidden" name="ticket" value="{ticket}">'
        f"{REMEMBER_BOX if remember else ''}"
        '<button name="decision" value="allow">Allow</button> '
        '<button name="decision" value="deny">Deny</button></form>'
    )
    return page("Allow access?", body, 200, raw=True)


def same_browser(request: Request, pending: Record) -> bool:
    """Whether ``request`` comes from the browser that saw the consent page of ``pending``."""
    return hmac.compare_digest(request.cookies.get(COOKIE, ""), pending["browser"])


def back_to(redirect: str, issuer: str, state: str | None, **params: Any) -> Response:
    """Redirects to the client's registered URI with ``params``, its ``state`` and ``iss``."""
    if state is not None:
        params["state"] = state
    params["iss"] = issuer  # RFC 9207: the client knows which server answered
    joiner = "&" if "?" in redirect else "?"
    return RedirectResponse(f"{redirect}{joiner}{urlencode(params)}", status_code=303)


def page(title: str, body: str, status: int, *, raw: bool = False) -> HTMLResponse:
    """A small page of the facade (``body`` escaped unless ``raw``), never cached or framed."""
    text = body if raw else f"<p>{html.escape(body)}</p>"
    document = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"</head><body><h1>{html.escape(title)}</h1>{text}</body></html>"
    )
    return HTMLResponse(document, status_code=status, headers=dict(PAGE_HEADERS))
