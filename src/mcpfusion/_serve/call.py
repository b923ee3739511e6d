"""One ``tools/call`` a hot path runs, on either transport: its flags, progress, registry."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Generic, TypeVar

from mcpfusion._tools.context import Progress

__all__ = ["HotCall", "Running", "no_progress"]

K = TypeVar("K")


async def no_progress(done: float, total: float | None, message: str | None) -> None:
    """What a call without a progress token reports to: nobody, as in the SDK."""


class HotCall:
    """A ``tools/call`` a hot path is running: what both transports keep of it.

    A transport says only what is its own: how the call's handler is stopped (``stop``)
    and how a notification of the call reaches the client (``notify``).

    Attributes:
        version: the protocol version its answer is written at.
        cancelled: by the client: nothing more is sent for it.
        over: the handler returned: its later notifications are dropped, as the SDK's
            closed request context drops them.
    """

    __slots__ = ("cancelled", "over", "version")

    def __init__(self, version: str) -> None:
        self.version = version
        self.cancelled = False
        self.over = False

    def stop(self) -> None:
        """Stops the call's handler (the client cancelled it, or the session ended)."""
        raise NotImplementedError

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Sends a notification of the call, as the SDK sends it."""
        raise NotImplementedError

    def progress(self, token: str | int) -> Progress:
        """The call's progress reporter: the SDK's ``notifications/progress`` with ``token``."""

        async def report(done: float, total: float | None, message: str | None) -> None:
            if self.over:
                return
            params: dict[str, Any] = {"progressToken": token, "progress": done}
            if total is not None:
                params["total"] = total
            if message is not None:
                params["message"] = message
            await self.notify("notifications/progress", params)

        return report

    def reporter(self, token: str | int | None) -> Progress:
        """``progress(token)``, or ``no_progress`` for a call that sent no token."""
        return no_progress if token is None else self.progress(token)


C = TypeVar("C", bound=HotCall)


class Running(Generic[K, C]):
    """A hot path's calls by key, from before their handler starts until it returns.

    A call is added before its handler runs, so a cancellation read right behind its
    request finds it; a key the client reused for a later call is not removed by the
    earlier one.
    """

    def __init__(self) -> None:
        self._calls: dict[K, C] = {}

    def add(self, key: K, call: C) -> None:
        """Notes ``call`` under ``key`` (a later call under the same key replaces it)."""
        self._calls[key] = call

    def done(self, key: K, call: C) -> None:
        """Forgets ``call``, unless a later call took its key."""
        call.over = True
        if self._calls.get(key) is call:
            del self._calls[key]

    def cancel(self, key: K) -> None:
        """Stops the call under ``key`` the client cancelled; nothing is sent for it any more."""
        call = self._calls.get(key)
        if call is not None:
            call.cancelled = True
            call.stop()

    def __bool__(self) -> bool:
        return bool(self._calls)

    def items(self) -> Iterator[tuple[K, C]]:
        """The running calls and their keys (a copy: stopping them may change the registry)."""
        return iter(list(self._calls.items()))
