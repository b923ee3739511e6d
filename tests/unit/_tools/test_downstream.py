"""Unit tests of mcpfusion._tools.downstream: where ``ctx.token_for`` gets its tokens."""

from __future__ import annotations

import pytest

from mcpfusion._errors import ToolError
from mcpfusion._identity import Identity
from mcpfusion._tools.context import Context, Request
from mcpfusion._tools.downstream import SERVING_TOKEN_SOURCE

pytestmark = pytest.mark.anyio


class Source:
    """A token source that says what it was asked."""

    async def token_for(self, identity: Identity | None, audience: str, scope: str = "") -> str:
        """The request, as a token."""
        subject = identity.subject if identity is not None else None
        return f"{subject} {audience} {scope}"


async def test_ctx_token_for_asks_the_serving_source_for_the_caller() -> None:
    """The serving source gets the caller's identity, the audience and the scopes joined."""
    ctx = Context(Request("t", "a", identity=Identity("ada")))
    token = SERVING_TOKEN_SOURCE.set(Source())
    try:
        found = await ctx.token_for("https://api.example", scopes=["read", "write"])
    finally:
        SERVING_TOKEN_SOURCE.reset(token)
    assert found == "ada https://api.example read write"


async def test_ctx_token_for_without_a_serving_sign_in_is_auth_required() -> None:
    """Without a serving source the handler gets AUTH_REQUIRED, which says why."""
    with pytest.raises(ToolError, match="does not sign users in") as raised:
        await Context(Request("t", "a")).token_for("https://api.example")
    assert raised.value.code == "AUTH_REQUIRED"


@pytest.mark.parametrize(
    ("audience", "scopes", "why"),
    [
        ("", (), "audience is a non-empty str"),
        ("https://api.example", "read write", "scopes is a list"),
        ("https://api.example", ["read write"], "scopes is a list"),
    ],
)
async def test_ctx_token_for_refuses_a_malformed_request(
    audience: str, scopes: object, why: str
) -> None:
    """An empty audience, scopes as one string or a scope with a space is a TypeError."""
    with pytest.raises(TypeError, match=why):
        await Context(Request("t", "a")).token_for(audience, scopes=scopes)  # type: ignore[arg-type]
