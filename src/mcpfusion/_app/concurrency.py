"""Calls running at once: an action's ``concurrency=`` and destructive calls per caller."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcpfusion._present.failures import busy
from mcpfusion._tools.caller_state import caller_key

if TYPE_CHECKING:
    from mcpfusion._identity import Identity
    from mcpfusion._present.response import ToolResponse
    from mcpfusion._tools.action import Action


class Running:
    """What runs now in this process: calls per action, and callers in a destructive call.

    The event loop runs one step at a time, so counting needs no lock: a call is let in
    or refused before its first await.
    """

    __slots__ = ("_actions", "_callers", "serialize_destructive")

    def __init__(self, serialize_destructive: bool) -> None:
        self.serialize_destructive = serialize_destructive
        self._actions: dict[Action, int] = {}
        self._callers: set[str] = set()

    def watches(self, action: Action) -> bool:
        """Whether calls of ``action`` are counted (so ``enter`` and ``leave`` apply)."""
        return action.concurrency is not None or (self.serialize_destructive and action.destructive)

    def enter(
        self, action: Action, identity: Identity | None, meta: Mapping[str, Any]
    ) -> tuple[ToolResponse | None, str | None]:
        """Lets a call in: ``(None, caller)`` to run it (``leave`` it after), or the
        ``BUSY`` result refusing it."""
        running = self._actions.get(action, 0)
        limit = action.concurrency
        if limit is not None and running >= limit:
            return busy(action.tool, action.name, "too many calls of it are running"), None
        caller = None
        if self.serialize_destructive and action.destructive:
            caller = caller_key(identity, meta)
            if caller in self._callers:
                return busy(action.tool, action.name, "another change of yours is running"), None
            self._callers.add(caller)
        self._actions[action] = running + 1
        return None, caller

    def leave(self, action: Action, caller: str | None) -> None:
        """Ends a call ``enter`` let in."""
        left = self._actions.get(action, 1) - 1
        if left:
            self._actions[action] = left
        else:
            self._actions.pop(action, None)
        if caller is not None:
            self._callers.discard(caller)
