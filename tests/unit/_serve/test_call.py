"""The hot paths' one call object: its progress reports and the registry of running calls."""

from __future__ import annotations

from typing import Any

import pytest

from mcpfusion._serve.call import HotCall, Running, no_progress

pytestmark = pytest.mark.anyio


class Recorded(HotCall):
    """A call that keeps what it sends and whether it was stopped."""

    __slots__ = ("sent", "stopped")

    def __init__(self) -> None:
        super().__init__("2025-11-25")
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        self.sent.append((method, params))


async def test_progress_is_the_sdks_notification_until_the_handler_returns() -> None:
    """Reports carry the token and only the fields given; none leaves once the call is over."""
    call = Recorded()
    report = call.reporter("tok")
    await report(1, None, None)
    await report(2, 5, "half")
    call.over = True
    await report(3, 5, None)
    assert call.sent == [
        ("notifications/progress", {"progressToken": "tok", "progress": 1}),
        (
            "notifications/progress",
            {"progressToken": "tok", "progress": 2, "total": 5, "message": "half"},
        ),
    ]
    assert call.reporter(None) is no_progress


def test_a_cancellation_stops_the_call_under_its_key() -> None:
    """cancel flags and stops the call registered under the key; an unknown key is nothing."""
    running: Running[int, Recorded] = Running()
    call = Recorded()
    running.add(1, call)
    running.cancel(2)
    assert not call.cancelled
    running.cancel(1)
    assert call.cancelled and call.stopped


def test_a_reused_key_is_not_freed_by_the_earlier_call() -> None:
    """A call that ends after a later one took its key leaves that later one registered."""
    running: Running[int, Recorded] = Running()
    first, second = Recorded(), Recorded()
    running.add(1, first)
    running.add(1, second)
    running.done(1, first)
    assert first.over and [call for _, call in running.items()] == [second]
    running.done(1, second)
    assert not running
