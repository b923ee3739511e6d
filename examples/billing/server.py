"""The billing example's tools: invoices, customers and a revenue report over ``BillingDB``."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from examples.billing.db import BillingDB
from examples.billing.presenters import Status, customer_view, invoice_view
from mcpfusion import Context, Fusion, ToolError, ToolResponse, toon_success

InvoiceId = Annotated[
    str, Field(description="Invoice id, e.g. INV-00001.", pattern=r"^INV-\d+$", max_length=16)
]
CustomerId = Annotated[
    str, Field(description="Customer id, e.g. CUS-0001.", pattern=r"^CUS-\d+$", max_length=16)
]


class MonthRevenue(BaseModel):
    """One month of the revenue report."""

    month: str = Field(pattern=r"^\d{4}-\d{2}$", description="Month of issue, YYYY-MM.")
    paid_cents: int = Field(description="Invoiced that month and paid, in cents.")
    pending_cents: int = Field(description="Invoiced that month, not paid yet, in cents.")


class RevenueReport(BaseModel):
    """Paid and outstanding amounts per month of one year."""

    year: int
    currency: str
    months: list[MonthRevenue]


def _not_found(kind: str, ident: str, listing: str) -> ToolError:
    return ToolError(
        "NOT_FOUND",
        f"{kind} {ident} does not exist.",
        recovery=f"Call {listing} to find a valid id.",
        available_actions=[listing],
    )


def create_app(db: BillingDB) -> Fusion:
    """Builds the billing server over ``db``: tools ``billing``, ``customers``, ``reports``."""
    app = Fusion("billing-server", version="0.1.0")
    billing = app.tool("billing", description="Invoices: list, read, remind, record payments.")
    billing.enable_select()

    @billing.action(
        "list_invoices",
        description="List invoices, newest last; filter by status or customer.",
        returns=invoice_view,
        read_only=True,
    )
    def list_invoices(
        status: Annotated[Status | None, Field(description="Only this status.")] = None,
        customer_id: Annotated[str | None, Field(description="Only this customer.")] = None,
    ) -> list[dict[str, Any]]:
        return db.list_invoices(status, customer_id)

    def invoice_or_error(invoice_id: str) -> dict[str, Any]:
        invoice = db.get_invoice(invoice_id)
        if invoice is None:
            raise _not_found("Invoice", invoice_id, "billing.list_invoices")
        return invoice

    @billing.action(
        "get_invoice",
        description="One invoice with its lines.",
        returns=invoice_view,
        read_only=True,
    )
    def get_invoice(invoice_id: InvoiceId) -> dict[str, Any]:
        return invoice_or_error(invoice_id)

    @billing.action(
        "remind",
        description="Send a payment reminder; sending it twice is harmless.",
        idempotent=True,
    )
    def remind(invoice_id: InvoiceId, ctx: Context) -> None:
        # A sync handler runs to its end even when the call is cancelled: the change is
        # committed only if the call is still wanted.
        outcome = db.record_reminder(invoice_id, proceed=lambda: not ctx.cancelled)
        if outcome == "unknown":
            raise _not_found("Invoice", invoice_id, "billing.list_invoices")
        if outcome == "paid":
            raise ToolError(
                "CONFLICT",
                f"Invoice {invoice_id} is paid: there is nothing to remind.",
                recovery="Call billing.get_invoice to see it.",
                available_actions=["billing.get_invoice"],
            )

    @billing.action(
        "mark_paid",
        description="Record the payment of an unpaid invoice.",
        returns=invoice_view,
        destructive=True,
    )
    def mark_paid(invoice_id: InvoiceId, ctx: Context) -> dict[str, Any]:
        outcome = db.mark_paid(invoice_id, proceed=lambda: not ctx.cancelled)
        if outcome == "unknown":
            raise _not_found("Invoice", invoice_id, "billing.list_invoices")
        if outcome == "paid":
            raise ToolError(
                "CONFLICT",
                f"Invoice {invoice_id} is already paid.",
                recovery="Nothing to do; call billing.get_invoice to see it.",
                available_actions=["billing.get_invoice"],
            )
        return invoice_or_error(invoice_id)

    customers = app.tool("customers", description="Customers: list and read.")
    customers.toon_description()

    @customers.action(
        "list_customers", description="List customers, optionally by country.", read_only=True
    )
    def list_customers(
        country: Annotated[
            str | None, Field(description="ISO 3166-1 alpha-2 code, e.g. DE.")
        ] = None,
    ) -> ToolResponse:
        rows = db.list_customers(country)
        # The projection is the whitelist here: TOON rows of four public columns.
        return toon_success(
            [{k: row[k] for k in ("id", "name", "email", "country")} for row in rows]
        )

    @customers.action(
        "get_customer", description="One customer.", returns=customer_view, read_only=True
    )
    def get_customer(customer_id: CustomerId) -> dict[str, Any]:
        customer = db.get_customer(customer_id)
        if customer is None:
            raise _not_found("Customer", customer_id, "customers.list_customers")
        return customer

    reports = app.tool("reports", description="Reports over the invoices.")

    @reports.action(
        "revenue",
        description="Paid and outstanding amounts per month of issue.",
        output_schema=RevenueReport,
        read_only=True,
    )
    def revenue(
        year: Annotated[int, Field(ge=2000, le=2100, description="Calendar year, e.g. 2024.")],
    ) -> dict[str, Any]:
        return db.revenue(year)

    return app
