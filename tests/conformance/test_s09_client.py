"""SPEC §9, talking to the client: UNSUPPORTED_BY_CLIENT, NOT_CONFIRMED and INVALID_ANSWER."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from mcpfusion import Confirm, Context, Fusion
from mcpfusion.testing import FakeClient, FusionTester
from tests.conformance.golden import assert_golden

pytestmark = pytest.mark.anyio


class Reason(BaseModel):
    """What the user is asked."""

    reason: str
    urgent: bool = False


def _app() -> tuple[Fusion, list[str]]:
    ran: list[str] = []
    app = Fusion("shop")
    orders = app.tool("orders", description="Orders.")

    @orders.action(destructive=True, confirm="Cancel order {order_id}?")
    def cancel(order_id: str) -> str:
        """Cancel an order."""
        ran.append(order_id)
        return "cancelled"

    @orders.action(confirm=Confirm(unsupported="proceed"))
    def archive(order_id: str) -> str:
        """Archive an order."""
        ran.append(order_id)
        return "archived"

    @orders.action(requires_client=["sampling"])
    async def summarize(ctx: Context) -> str:
        """Summarize with the client's model."""
        return (await ctx.sample("Summarize.")).text

    @orders.action
    async def ask(ctx: Context) -> str:
        """Ask the user why."""
        answer = await ctx.elicit("Why?", Reason)
        return answer.data.reason if answer.accepted else answer.action

    return app, ran


async def test_unsupported_by_client_envelope() -> None:
    """A required feature the client lacks is UNSUPPORTED_BY_CLIENT before the handler."""
    app, ran = _app()
    tester = FusionTester(app, client=FakeClient(features=["logging"]))
    result = await tester.call("orders", "cancel", order_id="A-1")
    assert_golden("s09_unsupported_by_client.txt", result.response)
    summarize = await tester.call("orders", "summarize")
    assert summarize.error_code == "UNSUPPORTED_BY_CLIENT"
    assert "support sampling" in summarize.error.message  # type: ignore[union-attr]
    assert ran == []


async def test_proceed_policy_runs_unasked() -> None:
    """Confirm(unsupported="proceed") runs the action when the client cannot ask."""
    app, ran = _app()
    result = await FusionTester(app).call("orders", "archive", order_id="A-2")
    assert (result.data, ran) == ("archived", ["A-2"])


async def test_not_confirmed_envelope() -> None:
    """A declined, cancelled or unticked confirmation is NOT_CONFIRMED; nothing runs."""
    app, ran = _app()
    client = FakeClient(
        answers=[("decline", None), ("cancel", None), ("accept", {"confirm": False})]
    )
    tester = FusionTester(app, client=client)
    declined = await tester.call("orders", "cancel", order_id="A-1")
    assert_golden("s09_not_confirmed.txt", declined.response)
    cancelled = await tester.call("orders", "cancel", order_id="A-1")
    unticked = await tester.call("orders", "cancel", order_id="A-1")
    assert [r.error_code for r in (cancelled, unticked)] == ["NOT_CONFIRMED"] * 2
    assert ran == []
    assert client.questions[0][0] == "Cancel order A-1?"


async def test_confirmed_runs() -> None:
    """An accepted confirm: true runs the handler once."""
    app, ran = _app()
    client = FakeClient(answers=[("accept", {"confirm": True})])
    result = await FusionTester(app, client=client).call("orders", "cancel", order_id="A-3")
    assert (result.data, ran) == ("cancelled", ["A-3"])


async def test_invalid_answer_envelope() -> None:
    """An accepted answer that does not fit the schema is INVALID_ANSWER naming the fields."""
    app, _ = _app()
    client = FakeClient(answers=[("accept", {"urgent": "very"})])
    result = await FusionTester(app, client=client).call("orders", "ask")
    assert_golden("s09_invalid_answer.txt", result.response)
