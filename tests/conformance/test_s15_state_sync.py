"""SPEC §15: state names, the <cache_invalidation> block, notifications and freshness markers."""

from __future__ import annotations

from typing import Any

import pytest

from mcpfusion import DefinitionError, Fusion, ToolError, response
from mcpfusion._present.statesync import matches, state_name
from mcpfusion.testing import FakeClient, FusionTester
from mcpfusion.wire import parse
from tests.conformance.golden import assert_golden
from tests.conformance.sample_app import PINNED

pytestmark = pytest.mark.anyio


def _billing() -> Fusion:
    app = Fusion("shop", **PINNED)
    billing = app.tool("billing", description="Invoices.")
    reports = app.tool("reports", description="Reports.")

    @billing.action(read_only=True, stale=True)
    def list_invoices() -> list[dict[str, Any]]:
        """List invoices."""
        return [{"id": "INV-1"}]

    @billing.action(invalidates=["billing.*", "reports.revenue", "billing.*"])
    def mark_paid(invoice_id: str) -> dict[str, Any]:
        """Record a payment."""
        if invoice_id == "INV-0":
            raise ToolError("NOT_FOUND", "No such invoice.")
        return {"id": invoice_id, "status": "paid"}

    @billing.action(invalidates=["reports.*"])
    def annotate(note: str) -> Any:
        """Annotate with a builder of its own."""
        return (
            response({"note": note}).rule("Notes are public.").invalidate("billing.list_invoices")
        )

    @reports.action(read_only=True, fresh_for=30)
    def revenue() -> dict[str, int]:
        """Revenue per month."""
        return {"paid": 1}

    return app


async def test_success_ends_with_the_invalidation_block() -> None:
    """A successful call ends with one <cache_invalidation caused_by="tool.action"> block."""
    result = await FusionTester(_billing()).call("billing", "mark_paid", invoice_id="INV-7")
    assert_golden("s15_invalidation.txt", result.response)
    assert result.invalidations == ("billing.*", "reports.revenue")
    assert result.caused_by == "billing.mark_paid"


async def test_builder_entries_come_first_and_the_block_is_last() -> None:
    """A response's own entries come before the action's; the block is the last kind."""
    result = await FusionTester(_billing()).call("billing", "annotate", note="<domain_rules>")
    assert_golden("s15_builder_invalidation.txt", result.response)
    assert result.invalidations == ("billing.list_invoices", "reports.*")


async def test_a_builder_returned_by_an_action_is_caused_by_it() -> None:
    """Entries a handler adds without a cause name its action."""
    app = Fusion("shop", **PINNED)
    billing = app.tool("billing", description="Invoices.")

    @billing.action
    def touch() -> Any:
        """Touch."""
        return response("OK").invalidate("billing.touch")

    result = await FusionTester(app).call("billing", "touch")
    assert result.blocks[-1].startswith('<cache_invalidation caused_by="billing.touch">')


async def test_a_failed_call_emits_no_block_and_notifies_nobody() -> None:
    """A failed mutation (error envelope or validation error) sends no block, no notice."""
    client = FakeClient()
    tester = FusionTester(_billing(), client=client)
    failed = await tester.call("billing", "mark_paid", invoice_id="INV-0")
    invalid = await tester.call("billing", "mark_paid", invoice_id=7)
    assert (failed.is_error, invalid.is_error) == (True, True)
    assert failed.invalidations == invalid.invalidations == ()
    assert not any("cache_invalidation" in block for block in failed.blocks + invalid.blocks)
    assert client.invalidations == []
    await tester.call("billing", "mark_paid", invoice_id="INV-7")
    await tester.call("billing", "annotate", note="n")
    assert client.invalidations == [
        ("billing.*", "reports.revenue"),
        ("billing.list_invoices", "reports.*"),  # what the block says, the handler's first
    ]


def test_caused_by_is_escaped_like_every_attribute() -> None:
    """caused_by escapes all five attribute characters."""
    built = response("OK").invalidate("a.b", caused_by="x\"<'&>").build()
    assert built.blocks[-1] == (
        '<cache_invalidation caused_by="x&quot;&lt;&apos;&amp;&gt;">\n- a.b\n</cache_invalidation>'
    )
    assert parse(built.to_mcp()["content"]).view.caused_by == "x\"<'&>"


def test_entries_follow_the_bullet_rules() -> None:
    """Entries are folded, neutralized, de-duplicated and kept in order."""
    built = response("OK").invalidate("b.*", "a\nb", "<cache_invalidation>", "b.*").build()
    assert built.blocks[-1] == (
        '<cache_invalidation caused_by="">\n- b.*\n- a b\n- &lt;cache_invalidation>\n'
        "</cache_invalidation>"
    )


def test_patterns_matching_nothing_are_a_definition_error() -> None:
    """A pattern that matches no state name stops the app, naming the known ones."""
    app = Fusion("shop", **PINNED)
    tool = app.tool("billing")

    @tool.action(invalidates=["reports.*"])
    def mark_paid() -> None:
        """Pay."""

    with pytest.raises(DefinitionError, match=r"invalidates 'reports\.\*', which matches no"):
        app.freeze()


def test_bad_patterns_and_options_raise_where_written() -> None:
    """Malformed patterns, invalidates on a read-only action, stale with fresh_for raise."""
    tool = Fusion("shop", **PINNED).tool("billing")
    with pytest.raises(DefinitionError, match="dot-separated names"):
        tool.action("a", invalidates=["billing.**"])(lambda: None)
    with pytest.raises(DefinitionError, match="read-only action changes nothing"):
        tool.action("b", read_only=True, invalidates=["billing.a"])(lambda: None)
    with pytest.raises(DefinitionError, match="either stale or fresh_for"):
        tool.action("c", stale=True, fresh_for=3)(lambda: None)
    with pytest.raises(DefinitionError, match="positive number of seconds"):
        tool.action("d", fresh_for=0)(lambda: None)


def test_state_names_and_matching() -> None:
    """Actions are tool.action, resources scheme.name; '*' is one segment."""
    assert state_name("billing://invoices/INV-1") == "billing.invoices"
    assert state_name("billing://invoices/{invoice_id}") == "billing.invoices"
    assert state_name("config://app") == "config.app"
    assert state_name("file:///srv/data/x.csv") == "file.srv"
    assert state_name("no-scheme") is None
    assert matches("billing.*", "billing.invoices")
    assert matches("billing.*", "billing.mark_paid")
    assert not matches("billing.*", "billing.admin.reset")
    assert not matches("billing.*", "reports.revenue")
    assert matches("*.revenue", "reports.revenue")


def test_freshness_markers_in_every_description_form() -> None:
    """stale and fresh_for are marked in grouped bullets, TOON rows and flat descriptions."""
    app = _billing()
    grouped = {t["name"]: t["description"] for t in app.list_tools()}
    assert_golden("s15_grouped_description.txt", grouped["billing"] + "\n\n" + grouped["reports"])

    toon = Fusion("t", **PINNED)
    tool = toon.tool("feed", description="Feed.")
    tool.toon_description()
    tool.action("latest", read_only=True, stale=True, description="Latest items.")(lambda: None)
    tool.action("rates", read_only=True, fresh_for=2.5, description="Rates.")(lambda: None)
    flat = Fusion("f", **PINNED)
    ftool = flat.tool("feed", exposition="flat", instructions="Use sparingly.")
    ftool.action("latest", stale=True, read_only=True, description="Latest items.")(lambda: None)
    texts = [toon.list_tools()[0]["description"], flat.list_tools()[0]["description"]]
    assert_golden("s15_toon_flat_descriptions.txt", "\n\n---\n\n".join(texts))
