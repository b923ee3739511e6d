"""The billing example pages list_invoices with cursors bound to the caller and its tenant."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from examples.billing import demo_keys
from mcpfusion.testing import CallResult, FusionTester
from tests.examples.billing_fixtures import key_identity, running_billing

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


def next_cursor(result: CallResult) -> str | None:
    """The cursor of the page after ``result``, or ``None`` on the last page."""
    assert result.structured_content is not None, result.text
    cursor: str | None = result.structured_content["page"]["nextCursor"]
    return cursor


async def test_northwind_pages_through_every_invoice(tester: FusionTester) -> None:
    """Following the cursors lists each of the tenant's invoices once, 50 a page at most."""
    northwind = tester.as_caller(await key_identity(demo_keys.NORTHWIND_READ))
    ids: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        args = {} if cursor is None else {"_cursor": cursor}
        page = await northwind.call("billing", "list_invoices", _select=["id"], **args)
        assert page.data is not None
        assert 0 < len(page.data) <= 50
        ids += [row["id"] for row in page.data]
        pages += 1
        cursor = next_cursor(page)
        if cursor is None or pages > 100:
            break
    assert cursor is None
    assert pages > 1
    assert len(ids) == len(set(ids))
    assert page.structured_content is not None
    assert len(ids) == page.structured_content["page"]["total"]
    assert all(not invoice.startswith("INV-9") for invoice in ids)  # Globex's are INV-9xxxx


async def test_a_filtered_list_pages_with_its_filter(tester: FusionTester) -> None:
    """A cursor keeps its filter: sent with another status it is refused."""
    northwind = tester.as_caller(await key_identity(demo_keys.NORTHWIND_READ))
    paid = await northwind.call("billing", "list_invoices", status="paid")
    cursor = next_cursor(paid)
    assert cursor is not None
    following = await northwind.call("billing", "list_invoices", status="paid", _cursor=cursor)
    assert following.data is not None
    assert {row["status"] for row in following.data} == {"paid"}
    other = await northwind.call("billing", "list_invoices", status="overdue", _cursor=cursor)
    assert other.error is not None
    assert other.error.code == "INVALID_CURSOR"
    assert "other arguments" in other.error.message


async def test_a_cursor_from_northwind_is_refused_to_globex(tester: FusionTester) -> None:
    """Globex cannot read Northwind's next page with Northwind's cursor: INVALID_CURSOR."""
    northwind = tester.as_caller(await key_identity(demo_keys.NORTHWIND_READ))
    globex = tester.as_caller(await key_identity(demo_keys.GLOBEX_READ))
    cursor = next_cursor(await northwind.call("billing", "list_invoices"))
    assert cursor is not None
    refused = await globex.call("billing", "list_invoices", _cursor=cursor)
    assert refused.is_error
    assert refused.error is not None
    assert refused.error.code == "INVALID_CURSOR"
    assert refused.error.message == (
        "billing/list_invoices: This cursor was issued to another caller."
    )
    assert "INV-0" not in refused.text  # nothing of Northwind's rows
    restarted = await globex.call("billing", "list_invoices")  # the recovery works
    assert restarted.data is not None
    assert all(row["id"].startswith("INV-9") for row in restarted.data)


async def test_another_northwind_key_cannot_reuse_the_cursor(tester: FusionTester) -> None:
    """A cursor is bound to the subject too, not only the tenant."""
    reader = tester.as_caller(await key_identity(demo_keys.NORTHWIND_READ))
    writer = tester.as_caller(await key_identity(demo_keys.NORTHWIND_WRITE))
    cursor = next_cursor(await reader.call("billing", "list_invoices"))
    refused = await writer.call("billing", "list_invoices", _cursor=cursor)
    assert refused.error is not None
    assert refused.error.code == "INVALID_CURSOR"


async def test_get_invoice_takes_no_cursor(tester: FusionTester) -> None:
    """The invoice Presenter's single-object action does not list `_cursor`."""
    northwind = tester.as_caller(await key_identity(demo_keys.NORTHWIND_READ))
    (billing,) = [tool for tool in northwind.list_tools() if tool["name"] == "billing"]
    described = billing["inputSchema"]["properties"]["_cursor"]["description"]
    assert described.endswith("Used by: list_invoices.")
