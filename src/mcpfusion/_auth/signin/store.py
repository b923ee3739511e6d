"""What the sign-in facade remembers: clients, pending sign-ins, codes, grants; in memory."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any, Protocol, runtime_checkable

Record = dict[str, Any]
"""A stored value: JSON-like, so that a shared store can keep it as text."""


@runtime_checkable
class SignInStore(Protocol):
    """Where the facade keeps its state; each entry expires after its ``ttl`` seconds.

    ``take`` reads and deletes in one step: a code or a refresh token is used once, even
    when two requests race with it.
    """

    async def put(self, kind: str, key: str, value: Record, ttl: float) -> None:
        """Keeps ``value`` under ``kind`` and ``key`` for ``ttl`` seconds."""
        ...

    async def get(self, kind: str, key: str) -> Record | None:
        """The value under ``kind`` and ``key``, or ``None`` (unknown or expired)."""
        ...

    async def take(self, kind: str, key: str) -> Record | None:
        """The value under ``kind`` and ``key``, deleted; ``None`` if there was none."""
        ...

    async def count(self, kind: str) -> int:
        """How many live entries of ``kind`` there are."""
        ...


class MemoryStore:
    """A ``SignInStore`` in this process's memory (one worker), bounded per kind.

    Args:
        max_entries: entries kept per kind; past it the oldest go first.
    """

    def __init__(self, max_entries: int = 100_000) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be positive; got {max_entries}")
        self.max_entries = max_entries
        self._kinds: dict[str, OrderedDict[str, tuple[float, Record]]] = {}

    def _live(self, kind: str) -> OrderedDict[str, tuple[float, Record]]:
        entries = self._kinds.setdefault(kind, OrderedDict())
        now = time.monotonic()
        while entries:
            key, (deadline, _) = next(iter(entries.items()))
            if deadline > now:
                break
            del entries[key]  # the oldest first: put() keeps them in deadline order per ttl
        return entries

    async def put(self, kind: str, key: str, value: Record, ttl: float) -> None:
        """Keeps ``value`` under ``kind`` and ``key`` for ``ttl`` seconds."""
        entries = self._live(kind)
        entries.pop(key, None)
        entries[key] = (time.monotonic() + ttl, value)
        while len(entries) > self.max_entries:
            entries.popitem(last=False)

    async def get(self, kind: str, key: str) -> Record | None:
        """The value under ``kind`` and ``key``, or ``None`` (unknown or expired)."""
        found = self._live(kind).get(key)
        if found is None or found[0] <= time.monotonic():
            return None
        return found[1]

    async def take(self, kind: str, key: str) -> Record | None:
        """The value under ``kind`` and ``key``, deleted; ``None`` if there was none."""
        found = self._live(kind).pop(key, None)
        if found is None or found[0] <= time.monotonic():
            return None
        return found[1]

    async def count(self, kind: str) -> int:
        """How many live entries of ``kind`` there are."""
        return len(self._live(kind))
