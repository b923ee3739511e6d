"""Tokens for downstream APIs as the caller: where ``ctx.token_for`` gets them while serving."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from mcpfusion._errors import ToolError

if TYPE_CHECKING:
    from mcpfusion._identity import Identity

logger = logging.getLogger("mcpfusion")


@runtime_checkable
class TokenSource(Protocol):
    """Gives a token for a downstream audience acting as a caller (``TokenExchange``)."""

    async def token_for(self, identity: Identity | None, audience: str, scope: str = "") -> str:
        """A token for ``audience`` acting as ``identity`` (``scope``: space-separated)."""
        ...


SERVING_TOKEN_SOURCE: contextvars.ContextVar[TokenSource | None] = contextvars.ContextVar(
    "mcpfusion_token_source", default=None
)
"""The token source of the server serving the current request: its sign-in's exchange."""


async def token_for(identity: Identity | None, audience: str, scopes: Sequence[str]) -> str:
    """A token for ``audience`` acting as ``identity``, from the serving sign-in.

    Raises:
        TypeError: on an audience that is not a str or scopes that are not a list of str.
        ToolError: ``AUTH_REQUIRED`` when the server has no sign-in, or the exchange fails.
    """
    if not isinstance(audience, str) or not audience:
        raise TypeError("audience is a non-empty str (the downstream API's identifier)")
    if isinstance(scopes, str) or not all(isinstance(s, str) and " " not in s for s in scopes):
        raise TypeError("scopes is a list of scope names")
    source = SERVING_TOKEN_SOURCE.get()
    if source is None:
        # A deployment mistake, not the caller's: the log says what to change.
        logger.warning("ctx.token_for needs a server signing in (HttpOptions(signin=...))")
        raise ToolError(
            "AUTH_REQUIRED",
            "Signing in is needed: this server does not sign users in.",
            recovery="Tell the user this tool needs a server with sign-in.",
        )
    return await source.token_for(identity, audience, " ".join(scopes))
