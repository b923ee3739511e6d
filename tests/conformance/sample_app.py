"""The sample app whose tools/list is pinned: grouped, TOON-described and flat tools."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from mcpfusion import ToolError, ui
from mcpfusion._app.app import Fusion
from mcpfusion._present.presenter import Presenter, suggest
from mcpfusion._tools.context import Context

PINNED: dict[str, Any] = {"data_format": "json", "ui_audience": "all", "definitions": "full"}
"""The forms the conformance goldens pin; an app's own defaults are the model's (issue 26),
pinned by tests/conformance/test_s04_audience.py and tests/unit/_present/test_style.py."""

InvoiceId = Annotated[str, Field(description="Invoice id, e.g. INV-00001", pattern=r"^INV-\d{5}$")]


class Customer(BaseModel):
    """A customer as agents may see it."""

    name: str
    email: str


class Invoice(BaseModel):
    """An invoice as agents may see it."""

    id: str
    customer: Customer
    amount_cents: int
    status: Literal["draft", "sent", "paid", "void"]


class LineItem(BaseModel):
    """One line of a new invoice."""

    sku: str
    quantity: Annotated[int, Field(ge=1)]


class Channel(Enum):
    """How a reminder is sent."""

    EMAIL = "email"
    SMS = "sms"


class Revenue(BaseModel):
    """Revenue of one month."""

    month: str
    total_cents: int


class Purge(BaseModel):
    """What a purge removed."""

    removed: int


INVOICES: dict[str, dict[str, Any]] = {
    f"INV-0000{n}": {
        "id": f"INV-0000{n}",
        "customer": {"name": "Ada", "email": "ada@example.com", "password_hash": "x"},
        "amount_cents": 1000 * n,
        "status": "sent",
        "internal_note": "never sent",
    }
    for n in range(1, 4)
}

invoice_view = Presenter("Invoice", Invoice, rules=["amount_cents is in CENTS. Divide by 100."])


@invoice_view.ui
def _invoice_summary(invoice: dict[str, Any]) -> ui.UIBlock:
    return ui.summary(f"Invoice {invoice['id']}: {invoice['status']}")


@invoice_view.suggest
def _invoice_next(invoice: dict[str, Any]) -> Any:
    return suggest("billing.remind", "Send a payment reminder") if invoice["status"] else None


customer_view = Presenter("Customer", Customer)

app = Fusion("billing-server", version="1.2.3", instructions="Use billing for invoices.", **PINNED)

billing = app.tool("billing", description="Invoices and payments.")
billing.enable_select()


@billing.action(returns=invoice_view, read_only=True)
async def get_invoice(invoice_id: InvoiceId, ctx: Context) -> Any:
    """Fetch one invoice."""
    if invoice_id not in INVOICES:
        raise ToolError(
            "NOT_FOUND",
            f"Invoice {invoice_id} does not exist.",
            recovery="List invoices to find a valid id.",
            available_actions=["list_invoices"],
        )
    return INVOICES[invoice_id]


@billing.action(returns=invoice_view, read_only=True)
async def list_invoices(
    status: Literal["draft", "sent", "paid", "void"] | None = None,
    limit: Annotated[int, Field(ge=1, le=100, description="At most this many")] = 20,
) -> Any:
    """List invoices, newest first."""
    rows = [i for i in INVOICES.values() if status is None or i["status"] == status]
    return rows[:limit]


@billing.action(returns=invoice_view)
async def create_invoice(customer_email: str, lines: list[LineItem], note: str = "") -> Any:
    """Create a draft invoice."""
    return {**INVOICES["INV-00001"], "status": "draft"}


@billing.action(destructive=True, idempotent=True)
def void_invoice(invoice_id: InvoiceId, reason: str) -> str:
    """Void an invoice; it cannot be undone."""
    return f"Invoice {invoice_id} is void."


@billing.action()
def remind(invoice_id: InvoiceId, channel: Channel = Channel.EMAIL) -> None:
    """Send a payment reminder."""


reports = app.tool("reports", description="Revenue reports.").toon_description()


@reports.action(output_schema=Revenue, read_only=True)
def monthly(month: Annotated[str, Field(description="Month as YYYY-MM")]) -> Revenue:
    """Revenue of one month."""
    return Revenue(month=month, total_cents=12_300)


@reports.action(output_schema=list[Revenue], read_only=True)
def yearly(year: int) -> list[Revenue]:
    """Revenue of each month of a year."""
    return [Revenue(month=f"{year}-01", total_cents=1)]


@reports.action(output_schema=Purge, destructive=True)
def purge(before: Annotated[str, Field(description="Month as YYYY-MM")]) -> dict[str, int]:
    """Delete cached reports older than a month."""
    return {"removed": 3}


crm = app.tool("crm", description="Customers.", exposition="flat")
crm.enable_select()


@crm.action(returns=customer_view, read_only=True)
def find_customer(email: str) -> dict[str, str]:
    """Find a customer by email."""
    return {"name": "Ada", "email": email, "password_hash": "x"}


@crm.action(output_schema=Customer, idempotent=True)
def rename_customer(email: str, name: str) -> Customer:
    """Change a customer's name."""
    return Customer(name=name, email=email)
