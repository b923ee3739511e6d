"""Credentials the upstream API takes: an API key or a bearer token, sent with every request."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from mcpfusion._errors import DefinitionError
from mcpfusion._identity import Identity

TokenSource = Callable[[], str] | Callable[[Identity | None], str | Awaitable[str]]
"""A function giving the token to send: of nothing, or of the caller's identity (sync or
async), for a token refreshed, or exchanged for the caller, elsewhere."""


@dataclass(frozen=True, slots=True)
class ApiKey:
    """An API key sent in a header (``X-API-Key`` by default), a query parameter or a cookie.

    Args:
        key: the key.
        name: the header, parameter or cookie that carries it.
        location: ``"header"``, ``"query"`` or ``"cookie"``.
    """

    key: str = field(repr=False)
    name: str = "X-API-Key"
    location: Literal["header", "query", "cookie"] = "header"

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key:
            raise DefinitionError("ApiKey needs a non-empty key")
        if self.location not in ("header", "query", "cookie"):
            raise DefinitionError(
                f"ApiKey location is 'header', 'query' or 'cookie'; got {self.location!r}"
            )


@dataclass(frozen=True, slots=True)
class Bearer:
    """A bearer token (``Authorization: Bearer ...``), fixed or read before each request.

    The caller's own MCP token is never forwarded (MCP forbids token passthrough); a
    function of the caller's identity can get a token for them instead, e.g. by an OAuth
    token exchange: ``Bearer(lambda identity: vault.token_for(identity.subject))``.

    Args:
        token: the token; or a function returning the current one, taking no argument or
            the caller's ``Identity`` (``None`` when anonymous), sync or async.
    """

    token: str | TokenSource = field(repr=False)

    def __post_init__(self) -> None:
        if not (callable(self.token) or (isinstance(self.token, str) and self.token)):
            raise DefinitionError("Bearer needs a non-empty token or a function returning one")

    @property
    def per_caller(self) -> bool:
        """Whether the token function takes the caller's identity."""
        if not callable(self.token):
            return False
        try:
            params = inspect.signature(self.token).parameters.values()
        except (TypeError, ValueError):
            return False
        return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)

    async def current(self, identity: Identity | None = None) -> str:
        """The token to send now, for ``identity``.

        Raises:
            TypeError: if the function gives no non-empty str.
        """
        token: Any = self.token
        if callable(token):
            token = token(identity) if self.per_caller else token()
            if inspect.isawaitable(token):
                token = await token
        if not isinstance(token, str) or not token:
            raise TypeError("the Bearer token function returned no token")
        return token


Credentials = ApiKey | Bearer
