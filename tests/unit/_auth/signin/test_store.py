"""The in-memory sign-in store: expiry, one-time take, bounds."""

from __future__ import annotations

import pytest

from mcpfusion._auth.signin.store import MemoryStore

pytestmark = pytest.mark.anyio


async def test_take_gives_a_value_once() -> None:
    """A taken entry is gone: a code cannot be redeemed twice."""
    store = MemoryStore()
    await store.put("code", "k", {"v": 1}, 60)
    assert await store.take("code", "k") == {"v": 1}
    assert await store.take("code", "k") is None


async def test_an_expired_entry_is_not_returned() -> None:
    """An entry past its ttl is neither read nor taken nor counted."""
    store = MemoryStore()
    await store.put("code", "k", {"v": 1}, 0)
    assert await store.get("code", "k") is None
    assert await store.take("code", "k") is None
    assert await store.count("code") == 0


async def test_the_store_is_bounded_per_kind() -> None:
    """Past max_entries the oldest entries of a kind go first."""
    store = MemoryStore(max_entries=2)
    for key in "abc":
        await store.put("client", key, {}, 60)
    assert await store.count("client") == 2 and await store.get("client", "a") is None
    with pytest.raises(ValueError, match="max_entries must be positive"):
        MemoryStore(max_entries=0)
