"""The billing example's tenants: each caller sees and changes its own tenant's rows only."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import toon_format

from examples.billing import demo_keys, seed, tenants
from examples.billing.server import create_app
from mcpfusion.auth import hash_api_key
from mcpfusion.testing import FusionTester
from tests.examples.billing_fixtures import GLOBEX_INVOICE, key_identity, running_billing

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """asyncio only: the example's lifespan opens SQLite, loop-agnostic but tested once."""
    return "asyncio"


@pytest.fixture
async def tester(tmp_path: Path) -> AsyncIterator[FusionTester]:
    """The billing app on a fresh database, inside its lifespan."""
    async with running_billing(tmp_path) as running:
        yield running


def test_the_configuration_holds_the_demo_keys_hashes_only() -> None:
    """Every demo key's hash is configured, and no raw key is."""
    stored = {h for tenant in tenants.TENANTS for h in tenant.api_keys}
    keys = [demo_keys.NORTHWIND_READ, demo_keys.NORTHWIND_WRITE]
    keys += [demo_keys.GLOBEX_READ, demo_keys.GLOBEX_WRITE]
    assert stored == {hash_api_key(key) for key in keys}
    source = Path(tenants.__file__).read_text()
    assert not any(key in source for key in keys)


async def test_another_tenants_invoice_is_indistinguishable_from_a_missing_one(
    tester: FusionTester,
) -> None:
    """NOT_FOUND, the same text, through every tool that takes an invoice id and _select."""
    northwind = tester.as_caller(await key_identity(demo_keys.NORTHWIND_WRITE))
    for action in ("get_invoice", "remind", "mark_paid"):
        theirs = await northwind.call("billing", action, invoice_id=GLOBEX_INVOICE)
        missing = await northwind.call("billing", action, invoice_id="INV-99999")
        assert theirs.error_code == missing.error_code == "NOT_FOUND"
        assert theirs.text.replace(GLOBEX_INVOICE, "X") == missing.text.replace("INV-99999", "X")
    selected = await northwind.call(
        "billing", "get_invoice", invoice_id=GLOBEX_INVOICE, _select=["id", "amount_cents"]
    )
    assert selected.error_code == "NOT_FOUND"
    globex = tester.as_caller(await key_identity(demo_keys.GLOBEX_READ))
    assert (await globex.call("billing", "get_invoice", invoice_id=GLOBEX_INVOICE)).data["id"]


async def test_lists_and_reports_hold_the_callers_tenant_only(tester: FusionTester) -> None:
    """No listing, customer read or report crosses tenants."""
    northwind = tester.as_caller(await key_identity(demo_keys.NORTHWIND_READ))
    globex = tester.as_caller(await key_identity(demo_keys.GLOBEX_READ))
    theirs = await globex.call("billing", "list_invoices", _select=["id"])
    assert theirs.data is not None
    their_ids = {row["id"] for row in theirs.data}
    assert their_ids and all(i.startswith("INV-9") for i in their_ids)
    ours = await northwind.call("billing", "list_invoices", customer_id="CUS-0901")
    assert ours.data == []
    assert (await northwind.call("customers", "get_customer", customer_id="CUS-0901")).error_code
    listed = await globex.call("customers", "list_customers")
    assert {row["id"] for row in _toon_rows(listed.text)} <= {
        f"CUS-{n:04d}" for n in range(901, 909)
    }
    ours_report = await northwind.call("reports", "revenue", year=2024)
    theirs_report = await globex.call("reports", "revenue", year=2024)
    assert ours_report.structured_content != theirs_report.structured_content


def _toon_rows(text: str) -> list[dict[str, Any]]:
    """The rows of a TOON data block."""
    decoded: list[dict[str, Any]] = toon_format.decode(text)
    return decoded


async def test_a_read_only_key_never_sees_a_write_and_is_refused_one(
    tester: FusionTester, caplog: pytest.LogCaptureFixture
) -> None:
    """billing:read lists no remind or mark_paid; calling them is FORBIDDEN and audited."""
    reader = tester.as_caller(await key_identity(demo_keys.NORTHWIND_READ))
    (billing,) = [tool for tool in reader.list_tools() if tool["name"] == "billing"]
    assert billing["inputSchema"]["properties"]["action"]["enum"] == [
        "list_invoices",
        "get_invoice",
    ]
    with caplog.at_level(logging.INFO, logger="mcpfusion.audit"):
        refused = await reader.call("billing", "mark_paid", invoice_id="INV-00002")
    assert refused.error_code == "FORBIDDEN"
    (record,) = [r.audit for r in caplog.records]  # type: ignore[attr-defined]
    assert (record["subject"], record["tenant"], record["outcome"], record["code"]) == (
        "northwind-reporting",
        seed.MAIN_TENANT,
        "refused",
        "FORBIDDEN",
    )
    assert json.dumps(record)  # a JSON formatter can write it as it is


async def test_stdio_runs_as_the_local_operator_of_the_main_tenant(tmp_path: Path) -> None:
    """The app's local identity reads and writes the main tenant, as the demo shows."""
    app = create_app(tmp_path / "billing.db")
    assert app.local_identity == tenants.LOCAL_OPERATOR
    with anyio.fail_after(30):
        async with FusionTester(app, identity=app.local_identity) as operator:
            listed = await operator.call("billing", "list_invoices")
    assert listed.data is not None and len(listed.data) == 50
