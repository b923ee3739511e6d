"""Verifier and rate-limit details behind tests/attack/test_seams_auth.py."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import pytest

import mcpfusion._auth.introspection
from mcpfusion import Identity
from mcpfusion._app.middleware import Call
from mcpfusion._auth.config import tenant_of
from mcpfusion.auth import APIKeyVerifier, IntrospectionVerifier, JWTVerifier, hash_api_key
from mcpfusion.middleware import MemoryRateLimitStore, by_identity

pytestmark = pytest.mark.anyio

KEY = "sk_unit_0123456789abcdef0123456789abcdef"


def key_of(identity: Identity | None) -> str:
    """The default rate-limit bucket of a call by ``identity``."""
    return by_identity(Call("t", "a", {}, identity, {}, None, None, None, None))


def test_bucket_keys_separate_origin_issuer_tenant_and_subject() -> None:
    """Each of these callers has a bucket of its own; the same caller keeps one."""
    callers = [
        Identity("reader"),  # an API key's holder: no claims
        Identity("reader", claims={"active": True, "sub": "reader"}),  # introspected, no iss
        Identity("reader", claims={"iss": "https://a.example"}),
        Identity("reader", claims={"iss": "https://b.example"}),
        Identity("reader", claims={"iss": "https://a.example"}, tenant="acme"),
        Identity("reader", claims={"iss": "https://a.example"}, tenant="globex"),
        Identity("reader", claims={"iss": "https://a.example"}, tenant=""),
        Identity("x:reader", claims={"iss": "https://a.example"}, tenant="acme"),
        Identity("reader", claims={"iss": "https://a.example"}, tenant="acme:x"),
        Identity("x:reader", claims={"iss": "https://a.example:x"}),
        None,
    ]
    keys = [key_of(identity) for identity in callers]
    assert len(set(keys)) == len(keys)
    assert key_of(Identity("reader", tenant="acme")) == key_of(Identity("reader", tenant="acme"))


def fixed(now: float) -> Callable[[], float]:
    """A clock that always reads ``now``."""
    return lambda: now


@pytest.mark.parametrize("rate", [0.001, 0.3])
def test_a_full_bucket_of_one_lets_the_first_call_pass(rate: float) -> None:
    """A fresh bucket with burst 1 passes its first call at any clock reading (no rounding)."""
    for now in (4009.95194508998, 3.3503687206204926, 1e6 + 0.1):
        store = MemoryRateLimitStore(clock=fixed(now))
        assert store.take_now("k", rate, 1) == 0.0
        assert store.take_now("k", rate, 1) > 0


async def test_an_expired_api_key_is_refused() -> None:
    """An API key whose identity's expires_at has passed verifies to None; a live one passes."""
    past = Identity("ci", expires_at=int(time.time()) - 1)
    future = Identity("ci", expires_at=int(time.time()) + 600)
    assert await APIKeyVerifier({hash_api_key(KEY): past}).verify(KEY) is None
    assert await APIKeyVerifier({hash_api_key(KEY): future}).verify(KEY) is future


def test_tenant_of_refuses_a_tenant_that_is_not_a_str() -> None:
    """A tenant function finding a list names no tenant: ValueError, which refuses the token."""
    assert tenant_of(lambda claims: claims.get("org"), {"org": "acme"}) == "acme"
    assert tenant_of("fixed", {}) == "fixed"
    assert tenant_of(None, {"org": "acme"}) is None
    with pytest.raises(ValueError, match="the tenant is a str or None; got a list"):
        tenant_of(lambda claims: claims.get("org"), {"org": ["acme"]})


def test_retry_and_inactive_seconds_are_checked() -> None:
    """A negative back-off or inactive cache time is a ValueError naming the option."""
    with pytest.raises(ValueError, match="retry_seconds is 0-3600 seconds"):
        JWTVerifier(issuer="https://i", audience="a", jwks_url="x", retry_seconds=-1)
    with pytest.raises(ValueError, match="inactive_seconds is 0-3600 seconds"):
        IntrospectionVerifier("https://i", client_id="c", client_secret="s", inactive_seconds=-1)


class Asked(IntrospectionVerifier):
    """An introspection verifier whose authorization server is a table, counting questions."""

    def __init__(self, answers: Mapping[str, Mapping[str, Any]], **options: Any) -> None:
        super().__init__(
            "https://id.example/introspect", client_id="c", client_secret="s", **options
        )
        self.answers = answers
        self.asked: list[str] = []

    async def _introspect(self, token: str) -> Mapping[str, Any]:
        self.asked.append(token)
        return self.answers.get(token, {"active": False})


ACTIVE = {"active": True, "sub": "svc", "scope": "mcp"}


async def test_refused_answers_are_cached_apart_and_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inactive answers are remembered, the oldest forgotten past the bound; active ones stay."""
    monkeypatch.setattr(mcpfusion._auth.introspection, "CACHE_ENTRIES", 2)
    verifier = Asked({"good": ACTIVE}, inactive_seconds=3600)
    assert await verifier.verify("good") is not None
    for token in ("u1", "u2", "u1", "u3", "u1"):
        assert await verifier.verify(token) is None
    assert await verifier.verify("good") is not None
    assert verifier.asked == ["good", "u1", "u2", "u3", "u1"]


async def test_no_inactive_cache_with_zero_seconds() -> None:
    """``inactive_seconds=0`` asks about a refused token every time."""
    verifier = Asked({}, inactive_seconds=0)
    for _ in range(2):
        assert await verifier.verify("unknown") is None
    assert verifier.asked == ["unknown", "unknown"]


@pytest.mark.parametrize(
    "answer",
    [
        {**ACTIVE, "org": ["acme"]},
        {**ACTIVE, "org": {"id": 1}},
        {**ACTIVE, "aud": 7},
        {**ACTIVE, "aud": {"https://mcp.example": 1}},
        {**ACTIVE, "sub": ["svc"]},
        {**ACTIVE, "exp": True},
    ],
    ids=repr,
)
async def test_an_answer_of_the_wrong_types_is_refused(answer: dict[str, Any]) -> None:
    """A tenant, audience, subject or exp of the wrong type refuses the token, never raises."""
    verifier = Asked(
        {"t": answer}, audience="https://mcp.example", tenant=lambda found: found.get("org")
    )
    assert await verifier.verify("t") is None


@pytest.mark.parametrize("token", ["", "a b", "tok%en", "t\u00f6ken", "tok=en", "=", "x" * 8193])
async def test_a_token_off_the_bearer_syntax_is_never_sent(token: str) -> None:
    """RFC 6750's b64token: anything else (or longer than MAX_TOKEN_CHARS) is refused unsent."""
    verifier = Asked({token: ACTIVE})
    assert await verifier.verify(token) is None
    assert verifier.asked == []
    assert await verifier.verify("Abc-._~+/9==") is None
    assert verifier.asked == ["Abc-._~+/9=="]
