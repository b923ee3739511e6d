"""Credentials the upstream API takes: an API key or a bearer token, sent with every request."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from mcpfusion._errors import DefinitionError


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

    Args:
        token: the token, or a function returning the current one (a token another
            component refreshes or exchanges).
    """

    token: str | Callable[[], str] = field(repr=False)

    def __post_init__(self) -> None:
        if not (callable(self.token) or (isinstance(self.token, str) and self.token)):
            raise DefinitionError("Bearer needs a non-empty token or a function returning one")

    def current(self) -> str:
        """The token to send now."""
        return self.token() if callable(self.token) else self.token


Credentials = ApiKey | Bearer
