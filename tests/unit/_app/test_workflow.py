"""The workflow gate: actions listed and callable by each caller's state."""

from __future__ import annotations

import logging

import pytest

from mcpfusion import (
    Context,
    DefinitionError,
    Fusion,
    Identity,
    ResponseBuilder,
    Workflow,
    response,
)
from mcpfusion._tools.caller_state import MemoryCallerStore
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio

ALICE = Identity("alice", tenant="acme")
BOB = Identity("bob", tenant="acme")


def review_flow() -> Workflow:
    """An invoice is looked up, reviewed, then paid; refunds come after payment."""
    return Workflow(
        ["open", "reviewed", "paid"],
        initial="open",
        transitions=[
            ("invoices.review", "open", "reviewed"),
            ("invoices.mark_paid", "reviewed", "paid"),
            ("reopen", "*", "open"),
        ],
        allowed={"invoices.mark_paid": ["reviewed"], "refunds": ["paid"]},
    )


def billing_app(flow: Workflow) -> Fusion:
    """Invoices (get, review, mark_paid, reopen) and a refunds tool gated to 'paid'."""
    app = Fusion("billing", workflow=flow)
    invoices = app.tool("invoices", description="Invoices.")

    @invoices.action
    async def get(invoice_id: str) -> str:
        """One invoice."""
        return f"invoice {invoice_id}"

    @invoices.action
    async def review(invoice_id: str) -> str:
        """Review an invoice."""
        return "reviewed"

    @invoices.action
    async def mark_paid(invoice_id: str) -> str:
        """Mark an invoice paid."""
        return "paid"

    @invoices.action
    async def reopen(ctx: Context) -> str:
        """Start over: a handler fires the transition."""
        moved = await flow.fire(ctx, "reopen")
        return f"moved={moved} state={await flow.state(ctx)}"

    refunds = app.tool("refunds", description="Refunds.")

    @refunds.action
    async def issue(invoice_id: str) -> str:
        """Refund an invoice."""
        return "refunded"

    return app


def names(tools: list[dict[str, object]]) -> list[object]:
    """The listed tool names."""
    return [tool["name"] for tool in tools]


async def test_workflow_refuses_an_action_outside_its_state_naming_the_way_there() -> None:
    """mark_paid before review is OUT_OF_STATE, and the recovery names invoices.review."""
    tester = FusionTester(billing_app(review_flow()), identity=ALICE)
    refused = await tester.call("invoices", "mark_paid", invoice_id="1")
    assert refused.error_code == "OUT_OF_STATE"
    assert "state 'open'" in refused.text
    assert "Call 'invoices.review' first" in refused.text


async def test_workflow_opens_the_gate_after_the_triggering_action_succeeds() -> None:
    """After review, mark_paid runs; after it, the caller is in 'paid'."""
    flow = review_flow()
    tester = FusionTester(billing_app(flow), identity=ALICE)
    assert not (await tester.call("invoices", "review", invoice_id="1")).is_error
    assert (await tester.call("invoices", "mark_paid", invoice_id="1")).data == "paid"
    assert await flow.state_of(ALICE) == "paid"


async def test_workflow_state_is_per_caller() -> None:
    """Alice's review does not open the gate for Bob."""
    app = billing_app(review_flow())
    await FusionTester(app, identity=ALICE).call("invoices", "review", invoice_id="1")
    bob = await FusionTester(app, identity=BOB).call("invoices", "mark_paid", invoice_id="1")
    assert bob.error_code == "OUT_OF_STATE"


async def test_workflow_lists_only_what_the_callers_state_allows() -> None:
    """refunds is listed for the caller in 'paid' only, and not for another caller."""
    app = billing_app(review_flow())
    tester = FusionTester(app, identity=ALICE)
    assert names(await app.list_tools_for(ALICE)) == ["invoices"]
    await tester.call("invoices", "review", invoice_id="1")
    await tester.call("invoices", "mark_paid", invoice_id="1")
    assert names(await app.list_tools_for(ALICE)) == ["invoices", "refunds"]
    assert names(await app.list_tools_for(BOB)) == ["invoices"]


async def test_workflow_announces_a_list_change_when_a_caller_moves() -> None:
    """A move tells the announcers (the server sends list_changed); a refusal does not."""
    app = billing_app(review_flow())
    told: list[tuple[str | None, str]] = []

    async def announcer(tenant: str | None, listed: str) -> None:
        told.append((tenant, listed))

    app.announce_changes(announcer)
    tester = FusionTester(app, identity=ALICE)
    await tester.call("invoices", "mark_paid", invoice_id="1")
    assert told == []
    await tester.call("invoices", "review", invoice_id="1")
    assert told == [("acme", "tools")]


async def test_workflow_failed_action_does_not_move_the_caller() -> None:
    """A call that fails validation fires no transition."""
    flow = review_flow()
    tester = FusionTester(billing_app(flow), identity=ALICE)
    assert (await tester.call("invoices", "review")).is_error
    assert await flow.state_of(ALICE) == "open"


async def test_workflow_handlers_fire_their_own_transitions() -> None:
    """A handler's ``fire`` moves its caller, from any state with a '*' source."""
    flow = review_flow()
    tester = FusionTester(billing_app(flow), identity=ALICE)
    await tester.call("invoices", "review", invoice_id="1")
    assert (await tester.call("invoices", "reopen")).data == "moved=True state=open"


async def test_workflow_advice_never_points_outside_the_gate() -> None:
    """From 'open', refunds needs 'paid': the way starts with review, not mark_paid."""
    flow = review_flow()
    assert flow.leading_to({"paid"}, "open") == ["invoices.review"]
    assert flow.leading_to({"paid"}, "reviewed") == ["invoices.mark_paid"]


def test_workflow_advice_follows_transitions_from_any_state() -> None:
    """A '*' source leads from every state, in the advice too."""
    flow = Workflow(
        ["a", "b"], initial="a", transitions=[("t.go", "*", "b")], allowed={"t.done": ["b"]}
    )
    assert flow.leading_to({"b"}, "a") == ["t.go"]


async def test_workflow_ignores_a_stored_state_it_does_not_declare() -> None:
    """A stored state that is no longer declared starts the caller over."""
    flow = review_flow()
    assert flow._state_in("archived") == "open"
    assert flow._state_in(["reviewed"]) == "open"


def test_workflow_definition_mistakes_fail_loudly() -> None:
    """Undeclared states, a bad initial state and a bare-str allowed list are refused."""
    with pytest.raises(DefinitionError, match="initial state 'nope'"):
        Workflow(["a"], initial="nope")
    with pytest.raises(DefinitionError, match="undeclared state 'z'"):
        Workflow(["a"], initial="a", transitions=[("t.x", "a", "z")])
    with pytest.raises(DefinitionError, match="collection of declared states"):
        Workflow(["a"], initial="a", allowed={"t.x": "a"})
    with pytest.raises(DefinitionError, match="repeats a state"):
        Workflow(["a", "a"], initial="a")
    with pytest.raises(DefinitionError, match="workflow must be a Workflow"):
        Fusion("x", workflow="flow")  # type: ignore[arg-type]


async def test_workflow_names_are_checked_against_the_apps_actions() -> None:
    """A typo in allowed or in a trigger stops the app when its catalog is built."""
    typo = Workflow(["a"], initial="a", allowed={"invoices.mark_payd": ["a"]})
    with pytest.raises(DefinitionError, match=r"'invoices\.mark_payd', which is no tool"):
        billing_app(typo).freeze()
    trigger = Workflow(["a", "b"], initial="a", transitions=[("invoices.reveiw", "a", "b")])
    with pytest.raises(DefinitionError, match=r"trigger 'invoices\.reveiw' names no action"):
        billing_app(trigger).freeze()


async def test_workflow_suggestions_never_point_outside_the_gate() -> None:
    """A handler's suggestions of actions its caller's state does not allow are dropped."""
    flow = review_flow()
    app = billing_app(flow)
    invoices = app.tools["invoices"]

    @invoices.action
    async def overview() -> ResponseBuilder:
        """What to do next, as the handler sees it."""
        return (
            response({"ok": True})
            .suggest("invoices.review", "review it")
            .suggest("mark_paid", "pay it")
            .suggest("refunds", "refund it")
        )

    tester = FusionTester(app, identity=ALICE)
    before = await tester.call("invoices", "overview")
    assert [s.tool for s in before.suggestions] == ["invoices.review"]
    await tester.call("invoices", "review", invoice_id="1")
    after = await tester.call("invoices", "overview")
    assert [s.tool for s in after.suggestions] == ["invoices.review", "mark_paid"]


class FailingStore(MemoryCallerStore):
    """A memory store whose writes fail, as a store that went down mid-call."""

    async def put(self, caller: str, name: str, value: str, ttl: float) -> None:
        """Fails."""
        raise OSError("the store is down")


async def test_workflow_keeps_a_handlers_result_when_its_transition_cannot_be_stored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The review ran: its result is sent, the caller stays put and the failure is logged."""
    app = billing_app(review_flow())
    app._caller_store = FailingStore()
    tester = FusionTester(app, identity=ALICE)
    with caplog.at_level(logging.WARNING, logger="mcpfusion"):
        reviewed = await tester.call("invoices", "review", invoice_id="1")
    assert reviewed.text == "reviewed"
    assert "its transition failed" in caplog.text
    assert (await tester.call("invoices", "mark_paid", invoice_id="1")).error_code == "OUT_OF_STATE"
