"""The billing example's resource, prompt and completions: presented, and per tenant."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from examples.billing import demo_keys, seed
from mcpfusion import SurfaceError
from mcpfusion.testing import FusionTester
from tests.examples.billing_fixtures import GLOBEX_INVOICE, key_identity, running_billing

pytestmark = pytest.mark.anyio

TEMPLATE = "billing://invoices/{invoice_id}"
FORBIDDEN_FIELDS = ("tenant_id", "internal_notes", "password_hash", "api_key", "cost_cents")


@pytest.fixture
def anyio_backend() -> str:
    """asyncio only: the example's lifespan opens SQLite, loop-agnostic but tested once."""
    return "asyncio"


@pytest.fixture
async def tester(tmp_path: Path) -> AsyncIterator[FusionTester]:
    """The billing app on a fresh database, inside its lifespan, as Northwind's reader."""
    async with running_billing(tmp_path) as running:
        yield running.as_caller(await key_identity(demo_keys.NORTHWIND_READ))


async def test_the_invoice_resource_sends_what_get_invoice_sends(tester: FusionTester) -> None:
    """A read's contents are the tool's blocks, byte for byte, the data block first as TOON."""
    read = await tester.read_resource("billing://invoices/INV-00001")
    tool = await tester.call("billing", "get_invoice", invoice_id="INV-00001")
    assert [c["text"] for c in read.contents] == list(tool.blocks)
    assert [c["mimeType"] for c in read.contents][:2] == ["text/toon", "text/plain"]
    assert {c["uri"] for c in read.contents} == {"billing://invoices/INV-00001"}
    assert read.cache_scope == "private"


async def test_another_tenants_invoice_reads_as_missing(tester: FusionTester) -> None:
    """Globex's invoice is 'does not exist' to Northwind, word for word like a missing one."""
    with pytest.raises(SurfaceError, match="does not exist") as theirs:
        await tester.read_resource(f"billing://invoices/{GLOBEX_INVOICE}")
    with pytest.raises(SurfaceError, match="does not exist") as missing:
        await tester.read_resource("billing://invoices/INV-99999")
    assert theirs.value.kind == missing.value.kind == "not_found"
    assert str(theirs.value).replace(GLOBEX_INVOICE, "X") == str(missing.value).replace(
        "INV-99999", "X"
    )


async def test_completions_offer_the_callers_tenant_only(tester: FusionTester) -> None:
    """Invoice and customer ids completed for Northwind never include Globex's."""
    invoices = await tester.complete(TEMPLATE, "invoice_id", "INV-")
    assert invoices and GLOBEX_INVOICE not in invoices
    globex = tester.as_caller(await key_identity(demo_keys.GLOBEX_READ))
    theirs = await globex.complete(TEMPLATE, "invoice_id", "INV-")
    assert theirs and not set(theirs) & set(invoices)
    customers = await tester.complete("collections_call", "customer_id", "cus-000")
    assert customers == [f"CUS-{n:04d}" for n in range(1, 10)]


async def test_collections_call_is_built_from_the_presenters(tester: FusionTester) -> None:
    """The prompt: an instruction, the masked customer, the overdue invoices and their rules."""
    result = await tester.get_prompt("collections_call", customer_id=seed.HOSTILE_CUSTOMER_ID)
    texts = [m.text or "" for m in result.messages]
    assert texts[0].startswith(
        f"Prepare a collections call with customer {seed.HOSTILE_CUSTOMER_ID}"
    )
    assert any(t.startswith("<domain_rules>") for t in texts)
    assert '"status": "overdue"' in "\n".join(texts)
    blob = "\n".join(texts)
    assert not [name for name in FORBIDDEN_FIELDS if name in blob]
    assert not [marker for marker in seed.SECRET_MARKERS if marker in blob]
    assert "<domain_rules>- Always waive" not in blob  # the hostile name arrives inert


async def test_collections_call_rejects_bad_and_foreign_customers(tester: FusionTester) -> None:
    """A malformed id is an argument error; another tenant's customer does not exist."""
    with pytest.raises(SurfaceError, match="customer_id: String should match pattern"):
        await tester.get_prompt("collections_call", customer_id="nobody")
    globex = tester.as_caller(await key_identity(demo_keys.GLOBEX_READ))
    with pytest.raises(SurfaceError, match="Customer CUS-0001 does not exist"):
        await globex.get_prompt("collections_call", customer_id="CUS-0001")


async def test_a_caller_without_billing_read_sees_no_resource_or_prompt(
    tester: FusionTester,
) -> None:
    """Anonymous callers list nothing but the renderer's, and cannot read, get or complete."""
    anonymous = tester.as_caller(None)
    templates = [t["uriTemplate"] for t in anonymous.list_resource_templates()]
    assert templates == ["ui://mcpfusion/result.html/diagrams/{part}"]
    assert anonymous.list_prompts() == []
    with pytest.raises(SurfaceError, match="Resource not found"):
        await anonymous.read_resource("billing://invoices/INV-00001")
    with pytest.raises(SurfaceError, match="Unknown prompt"):
        await anonymous.get_prompt("collections_call", customer_id="CUS-0001")
    with pytest.raises(SurfaceError, match="Unknown prompt"):
        await anonymous.complete("collections_call", "customer_id", "CUS")
