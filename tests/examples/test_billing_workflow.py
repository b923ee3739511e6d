"""The billing example's payment workflow: review an invoice, then pay that invoice."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.billing import demo_keys
from examples.billing.server import create_app
from mcpfusion.testing import FusionTester
from tests.examples.billing_fixtures import key_identity

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """asyncio only: the example's lifespan opens SQLite, loop-agnostic but tested once."""
    return "asyncio"


async def test_workflow_billing_pays_only_the_invoice_its_caller_reviewed(tmp_path: Path) -> None:
    """mark_paid is OUT_OF_STATE before a review, NOT_REVIEWED for another invoice, and
    pays the reviewed one; another caller's gate stays closed throughout."""
    app = create_app(tmp_path / "billing.db", review_payments=True)
    other = await key_identity(demo_keys.GLOBEX_WRITE)
    async with FusionTester(app, identity=app.local_identity) as operator:
        refused = await operator.call("billing", "mark_paid", invoice_id="INV-00002")
        assert refused.error_code == "OUT_OF_STATE"
        assert "'billing.review'" in refused.text
        assert not (await operator.call("billing", "review", invoice_id="INV-00002")).is_error
        elsewhere = await operator.call("billing", "mark_paid", invoice_id="INV-00003")
        assert elsewhere.error_code == "NOT_REVIEWED"
        stranger = await operator.as_caller(other).call(
            "billing", "mark_paid", invoice_id="INV-00002"
        )
        assert stranger.error_code == "OUT_OF_STATE"
        paid = await operator.call("billing", "mark_paid", invoice_id="INV-00002")
        assert paid.data["status"] == "paid"
        again = await operator.call("billing", "mark_paid", invoice_id="INV-00002")
        assert again.error_code == "OUT_OF_STATE"


async def test_workflow_billing_without_review_payments_lists_no_review(tmp_path: Path) -> None:
    """The example's default app has no workflow and no review action."""
    app = create_app(tmp_path / "billing.db")
    assert app.workflow is None
    assert "review" not in app.tools["billing"].actions
