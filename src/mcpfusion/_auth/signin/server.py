"""The sign-in facade's routes: metadata, authorize, consent, the provider's callback."""

from __future__ import annotations

import logging
from typing import Final

from authlib.common.security import generate_token
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from mcpfusion._app.ratelimit import RateLimitStore
from mcpfusion._auth.config import Auth
from mcpfusion._auth.signin.config import SignIn
from mcpfusion._auth.signin.consents import Consents
from mcpfusion._auth.signin.directory import Directory
from mcpfusion._auth.signin.exchange import TokenExchange, serving_with
from mcpfusion._auth.signin.grants import Grants, granted, key_of, read_form, s256
from mcpfusion._auth.signin.pages import COOKIE, back_to, consent_page, page, same_browser
from mcpfusion._auth.signin.plain import provider_for
from mcpfusion._auth.signin.provider import ProviderError, upstream_of
from mcpfusion._auth.signin.sealed import Sealer
from mcpfusion._auth.signin.store import MemoryStore, Record
from mcpfusion._auth.signin.tokens import TokenIssuer

logger = logging.getLogger("mcpfusion.auth")

_STEP_SECONDS: Final = 600
_CODE_SECONDS: Final = 60
_SIGNIN_ONLY: Final = ("nonce", "verifier", "remembered", "remember")
"""What a pending sign-in holds past its consent: dropped when consent is asked again."""


class Facade:
    """An OAuth 2.1 authorization server for MCP clients, signing users in at a provider.

    Args:
        settings: the ``SignIn`` option.
        rate_limits: where the per-address registration buckets live (the server's
            ``rate_limit_store``, shared by its workers); ``None``: this process's memory.
    """

    def __init__(self, settings: SignIn, rate_limits: RateLimitStore | None = None) -> None:
        self.settings = settings
        self.base = settings.base_url
        self.store = settings.store if settings.store is not None else MemoryStore()
        self.provider = provider_for(settings)
        self.issuer = settings.issuer_url
        self.tokens = TokenIssuer(
            issuer=self.issuer,
            audience=settings.resource,
            store=self.store,
            signing_key=settings.signing_key,
            ttl=settings.token_ttl,
        )
        self.sealer = Sealer(settings.client_secret)
        self.exchange = TokenExchange(settings)
        self.consents = Consents(
            self.store, settings.consent_ttl, secure=self.base.startswith("https:")
        )
        self.directory = Directory(settings, self.store, rate_limits)
        self.client = self.directory.client
        self.grants = Grants(settings, self.store, self.tokens, self.client, self.consents.forget)

    def auth(self) -> Auth:
        """The resource-server side: the MCP endpoint accepts the facade's tokens."""
        return Auth(
            verifier=self.tokens,
            resource=self.settings.resource,
            authorization_servers=[self.issuer],
            scopes_supported=self.settings.scopes_supported or None,
        )

    def serving(self, endpoint: ASGIApp) -> ASGIApp:
        """``endpoint`` with this sign-in's token exchange behind ``ctx.token_for``."""
        return serving_with(self.exchange, endpoint)

    def routes(self) -> list[BaseRoute]:
        """The facade's endpoints, to mount beside the MCP endpoint."""
        return [
            Route("/.well-known/oauth-authorization-server", self.metadata, methods=["GET"]),
            Route("/oauth/jwks", self.jwks, methods=["GET"]),
            Route("/oauth/register", self.directory.register, methods=["POST"]),
            Route("/oauth/authorize", self.authorize, methods=["GET"]),
            Route("/oauth/consent", self.consent, methods=["POST"]),
            Route("/oauth/callback", self.callback, methods=["GET"]),
            Route("/oauth/token", self.grants.token, methods=["POST"]),
            Route("/oauth/revoke", self.grants.revoke, methods=["POST"]),
        ]

    async def metadata(self, _: Request) -> Response:
        """The authorization server metadata (RFC 8414)."""
        return JSONResponse(
            {
                "issuer": self.issuer,
                "authorization_endpoint": f"{self.base}/oauth/authorize",
                "token_endpoint": f"{self.base}/oauth/token",
                "registration_endpoint": f"{self.base}/oauth/register",
                "revocation_endpoint": f"{self.base}/oauth/revoke",
                "jwks_uri": f"{self.base}/oauth/jwks",
                "scopes_supported": list(self.settings.scopes_supported),
                "response_types_supported": ["code"],
                "grant_types_supported": [
                    "authorization_code",
                    "refresh_token",
                    "client_credentials",
                ],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": [
                    "none",
                    "client_secret_post",
                    "client_secret_basic",
                ],
                "revocation_endpoint_auth_methods_supported": [
                    "none",
                    "client_secret_post",
                    "client_secret_basic",
                ],
                "authorization_response_iss_parameter_supported": True,
                "client_id_metadata_document_supported": self.directory.documents is not None,
            }
        )

    async def jwks(self, _: Request) -> Response:
        """The keys the facade's access tokens are signed with."""
        return JSONResponse(self.tokens.jwks())

    async def authorize(self, request: Request) -> Response:
        """Checks an authorization request, then shows the consent page."""
        query = request.query_params
        client = await self.client(query.get("client_id", ""), request)
        if client is None:
            return page("Sign-in refused", "The application is not registered here.", 400)
        redirect = query.get("redirect_uri")
        if redirect is None and len(client["redirect_uris"]) == 1:
            redirect = client["redirect_uris"][0]
        if redirect is None or redirect not in client["redirect_uris"]:
            # Never redirect to a URI the client did not register: that is an open redirect
            # carrying the code to whoever wrote the link.
            return page("Sign-in refused", "The redirect URI is not registered.", 400)
        state = query.get("state")

        def back(error: str, description: str) -> Response:
            return back_to(redirect, self.issuer, state, error=error, error_description=description)

        if query.get("response_type") != "code":
            return back("unsupported_response_type", "response_type is code")
        challenge = query.get("code_challenge", "")
        if query.get("code_challenge_method") != "S256" or not 43 <= len(challenge) <= 128:
            return back("invalid_request", "PKCE with S256 is required")
        if query.get("resource", self.settings.resource) != self.settings.resource:
            return back("invalid_target", "this server issues tokens for itself only")
        scopes = granted(self.settings, query.get("scope"))
        if scopes is None:
            return back("invalid_scope", "a scope asked for is not supported")
        pending: Record = {
            "client_id": client["client_id"],
            "redirect_uri": redirect,
            "state": state,
            "challenge": challenge,
            "scopes": sorted(scopes),
            "browser": generate_token(32),
        }
        remembered = await self.consents.subject(request, client["client_id"], scopes)
        if remembered is not None:
            # The user consented before and chose to be remembered: on to the provider,
            # where the same user must sign in (the callback checks).
            onward = await self._to_provider({**pending, "remembered": remembered})
            return self._bound(onward, pending["browser"])
        return await self._ask(client, pending)

    async def _ask(self, client: Record, pending: Record) -> Response:
        """The consent page for ``pending``, bound to this browser."""
        ticket = generate_token(32)
        await self.store.put("consent", key_of(ticket), pending, _STEP_SECONDS)
        remember = self.consents.ttl > 0
        answer = consent_page(
            client, pending["redirect_uri"], pending["scopes"], ticket, self.base, remember
        )
        return self._bound(answer, pending["browser"])

    def _bound(self, answer: Response, browser: str) -> Response:
        """``answer`` binding the sign-in to this browser by the step cookie."""
        answer.set_cookie(
            COOKIE,
            browser,
            max_age=_STEP_SECONDS,
            path="/oauth",
            httponly=True,
            samesite="lax",
            secure=self.base.startswith("https:"),
        )
        return answer

    async def consent(self, request: Request) -> Response:
        """The user's answer on the consent page: on to the provider's login, or back."""
        form = await read_form(request)
        if form is None:
            return page("Sign-in refused", "The form is too large.", 413)
        ticket, decision = form.get("ticket", ""), form.get("decision")
        pending = await self.store.take("consent", key_of(ticket))
        if pending is None or not same_browser(request, pending):
            return page("Sign-in refused", "This consent expired or is not yours.", 400)
        if decision != "allow":
            return back_to(
                pending["redirect_uri"], self.issuer, pending["state"], error="access_denied"
            )
        return await self._to_provider({**pending, "remember": form.get("remember") == "yes"})

    async def _to_provider(self, pending: Record) -> Response:
        """Sends the browser to the provider's login for ``pending``."""
        state, nonce, verifier = generate_token(32), generate_token(32), generate_token(64)
        await self.store.put(
            "signin",
            key_of(state),
            {**pending, "nonce": nonce, "verifier": verifier},
            _STEP_SECONDS,
        )
        try:
            url = await self.provider.login_url(
                state=state,
                nonce=nonce,
                challenge=s256(verifier),
                redirect=f"{self.base}/oauth/callback",
            )
        except ProviderError as exc:
            logger.error("sign-in provider unavailable: %s", exc)
            return page("Sign-in unavailable", "The identity provider cannot be reached.", 502)
        return RedirectResponse(url, status_code=303)

    async def callback(self, request: Request) -> Response:
        """The provider sends the browser back: redeem its code, give the client ours."""
        query = request.query_params
        pending = await self.store.take("signin", key_of(query.get("state", "")))
        if pending is None or not same_browser(request, pending):
            return page("Sign-in refused", "This sign-in expired or is not yours.", 400)
        redirect, state = pending["redirect_uri"], pending["state"]
        if "code" not in query:
            return back_to(redirect, self.issuer, state, error="access_denied")
        try:
            user, upstream = await self.provider.redeem(
                code=query["code"],
                verifier=pending["verifier"],
                redirect=f"{self.base}/oauth/callback",
                nonce=pending["nonce"],
            )
        except ProviderError as exc:
            logger.warning("sign-in failed at the provider: %s", exc)
            return back_to(redirect, self.issuer, state, error="access_denied")
        remembered = pending.get("remembered")
        if remembered is not None and remembered != user.subject:
            # Another user signed in at the provider: the remembered consent is not theirs.
            client = await self.client(pending["client_id"], request)
            if client is None:
                return page("Sign-in refused", "The application is not registered here.", 400)
            fresh = {k: v for k, v in pending.items() if k not in _SIGNIN_ONLY}
            asked = await self._ask(client, {**fresh, "browser": generate_token(32)})
            self.consents.clear(asked)
            return asked
        scopes = pending["scopes"]
        if self.settings.scopes_of is not None:
            # The user's own rights bound what the client asked and the user consented to.
            allowed = self.settings.scopes_of(user.claims)
            if isinstance(allowed, str):
                raise TypeError("scopes_of returns a collection of scope names, not a str")
            scopes = sorted(set(scopes) & set(allowed))
        code, grant = generate_token(48), generate_token(24)
        claims = {k: v for k, v in user.claims.items() if isinstance(v, str | bool)}
        record: Record = {
            "client_id": pending["client_id"],
            "redirect_uri": redirect,
            "challenge": pending["challenge"],
            "scopes": scopes,
            "subject": user.subject,
            "tenant": user.tenant,
            "claims": claims,
            "grant": grant,
            # The provider's own tokens stay here, sealed, for token exchange; no client
            # sees them.
            "upstream": self.sealer.seal(upstream_of(upstream), f"upstream:{grant}"),
        }
        await self.store.put("code", key_of(code), record, _CODE_SECONDS)
        answer = back_to(redirect, self.issuer, state, code=code)
        if pending.get("remember"):
            await self.consents.remember(
                request,
                answer,
                subject=user.subject,
                client_id=pending["client_id"],
                scopes=pending["scopes"],
            )
        return answer
