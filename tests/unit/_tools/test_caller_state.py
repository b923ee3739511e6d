"""Caller state: keys per identity, tenant and conversation; values as JSON with TTLs."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from mcpfusion import CallerState, Context, Fusion, Identity
from mcpfusion._tools.caller_state import (
    CONVERSATION_META,
    SERVING_CALLER_STORE,
    VALUE_LIMIT,
    MemoryCallerStore,
    caller_key,
    current_store,
    identity_key,
)
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio

ALICE = Identity("alice", tenant="acme")


class Cart(BaseModel):
    """A cart."""

    items: list[str]


def counter_app() -> Fusion:
    """A tool counting each caller's calls in its caller state."""
    app = Fusion("counter")
    counter = app.tool("counter", description="Counts.")

    @counter.action
    async def bump(ctx: Context) -> int:
        """Counts this caller's calls."""
        seen = await ctx.caller_state.get("seen", 0, type=int) + 1
        await ctx.caller_state.set("seen", seen)
        return seen

    return app


def test_caller_state_keys_differ_per_identity_tenant_and_conversation() -> None:
    """A subject in another tenant, another issuer or another conversation is another key."""
    keys = {
        caller_key(None, {}),
        caller_key(Identity("alice"), {}),
        caller_key(ALICE, {}),
        caller_key(Identity("alice", tenant="other"), {}),
        caller_key(Identity("alice", claims={"iss": "x", "sub": "alice"}), {}),
        caller_key(ALICE, {CONVERSATION_META: "c1"}),
        caller_key(ALICE, {CONVERSATION_META: "c2"}),
    }
    assert len(keys) == 7


def test_caller_state_ignores_a_conversation_that_is_not_a_short_str() -> None:
    """A conversation id of another type or too long leaves the identity's own key."""
    plain = caller_key(ALICE, {})
    assert caller_key(ALICE, {CONVERSATION_META: 7}) == plain
    assert caller_key(ALICE, {CONVERSATION_META: "x" * 201}) == plain


async def test_caller_state_survives_between_calls_of_one_caller_only() -> None:
    """Each caller counts its own calls; another identity starts from zero."""
    app = counter_app()
    alice = FusionTester(app, identity=ALICE)
    bob = FusionTester(app, identity=Identity("bob", tenant="acme"))
    assert (await alice.call("counter", "bump")).data == 1
    assert (await alice.call("counter", "bump")).data == 2
    assert (await bob.call("counter", "bump")).data == 1


async def test_caller_state_apps_in_one_process_do_not_share_memory() -> None:
    """Two apps keep their own memory stores for the same caller."""
    first, second = counter_app(), counter_app()
    await FusionTester(first, identity=ALICE).call("counter", "bump")
    assert (await FusionTester(second, identity=ALICE).call("counter", "bump")).data == 1


async def test_caller_state_values_expire_after_their_ttl() -> None:
    """A value read after its TTL is gone."""
    now = [0.0]
    store = MemoryCallerStore(clock=lambda: now[0])
    state = CallerState(store, "k")
    await state.set("cart", ["a"], ttl=10)
    assert await state.get("cart") == ["a"]
    now[0] = 10.0
    assert await state.get("cart", "gone") == "gone"


async def test_caller_state_reads_typed_values_and_deletes() -> None:
    """``type=`` validates what was stored; ``delete`` removes it."""
    state = CallerState(MemoryCallerStore(), "k")
    await state.set("cart", Cart(items=["a"]))
    assert await state.get("cart", type=Cart) == Cart(items=["a"])
    with pytest.raises(ValidationError, match="items"):
        await state.get("cart", type=list[int])
    await state.delete("cart")
    assert await state.get("cart") is None


async def test_caller_state_refuses_what_json_cannot_carry_and_oversized_values() -> None:
    """NaN, objects, huge values, reserved names and bad TTLs are refused loudly."""
    state = CallerState(MemoryCallerStore(), "k")
    with pytest.raises(ValueError, match="must be JSON"):
        await state.set("x", float("nan"))
    with pytest.raises(ValueError, match="must be JSON"):
        await state.set("x", object())
    with pytest.raises(ValueError, match="takes over"):
        await state.set("x", "y" * VALUE_LIMIT)
    with pytest.raises(ValueError, match="are the framework's"):
        await state.set("mcpfusion.workflow.x", "open")
    with pytest.raises(ValueError, match="ttl is a positive number"):
        await state.set("x", 1, ttl=0)
    with pytest.raises(ValueError, match="1 to 200 characters"):
        await state.get("")


def test_caller_state_outside_a_call_raises() -> None:
    """No app, no serving store: there is no caller to keep state for."""
    token = SERVING_CALLER_STORE.set(None)
    try:
        with pytest.raises(RuntimeError, match="during a tool call only"):
            current_store()
    finally:
        SERVING_CALLER_STORE.reset(token)


def test_the_remembered_key_belongs_to_the_identity_asked_about() -> None:
    """Keys asked for in turn, the same identity object again included, each match a key
    made afresh: remembering the last one never hands it to another identity."""
    alice = Identity("alice", tenant="t1")
    twin = Identity("alice", tenant="t2")
    token = Identity("alice", claims={"iss": "https://idp"})
    fresh = {
        id(i): identity_key(Identity(i.subject, tenant=i.tenant, claims=i.claims))
        for i in (alice, twin, token)
    }
    for identity in (alice, alice, twin, token, alice, None, token):
        expected = "anonymous" if identity is None else fresh[id(identity)]
        assert identity_key(identity) == expected
    assert len(set(fresh.values())) == 3
