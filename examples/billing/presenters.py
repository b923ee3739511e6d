"""The billing example's Presenters: what an agent may see of invoices, lines and customers."""

from __future__ import annotations

from collections import Counter
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, Field

from mcpfusion import Presenter, Suggestion, ui

Status = Literal["paid", "pending", "overdue"]
STATUSES: tuple[Status, ...] = ("paid", "pending", "overdue")


class InvoiceLine(BaseModel):
    """One line of an invoice, as the agent sees it (no cost price)."""

    sku: str
    description: str
    quantity: int
    unit_price_cents: int = Field(description="Price of one unit, in cents.")


class Invoice(BaseModel):
    """An invoice, as the agent sees it (no tenant, no internal notes)."""

    id: str = Field(description="Invoice id, e.g. INV-00001.")
    number: str
    customer_id: str
    customer_name: str
    amount_cents: int = Field(description="Total, in cents.")
    currency: str
    status: Status
    issued_at: date
    due_at: date


class Customer(BaseModel):
    """A customer, as the agent sees it (no password hash, no API key)."""

    id: str
    name: str
    email: str
    country: str = Field(description="ISO 3166-1 alpha-2 country code.")


def money(cents: int, currency: str = "") -> str:
    """Formats cents for people reading a table: ``123456`` -> ``1,234.56 EUR``."""
    return f"{cents / 100:,.2f} {currency}".rstrip()


# -- invoice lines ---------------------------------------------------------------------------

invoice_line_view = Presenter(
    "InvoiceLine", InvoiceLine, limit=20, rules=["unit_price_cents is in CENTS."]
)


@invoice_line_view.collection_ui
def _lines_table(lines: list[dict[str, Any]]) -> ui.UIBlock:
    return ui.table(
        ["SKU", "Description", "Qty", "Unit price"],
        [
            [line["sku"], line["description"], line["quantity"], money(line["unit_price_cents"])]
            for line in lines
        ],
        title="Lines",
    )


# -- invoices --------------------------------------------------------------------------------

invoice_view = Presenter(
    "Invoice", Invoice, limit=50, rules=["amount_cents is in CENTS. Divide by 100."]
).embed("lines", invoice_line_view)


@invoice_view.ui
def _invoice_chart(invoice: dict[str, Any]) -> ui.UIBlock:
    lines = invoice.get("lines") or []
    bars = [
        {"name": line["sku"], "value": line["quantity"] * line["unit_price_cents"] / 100}
        for line in lines
    ] or [{"name": invoice["id"], "value": invoice["amount_cents"] / 100}]
    return ui.echarts(
        {
            "title": {"text": f"{invoice['id']} ({invoice['status']})"},
            "tooltip": {},
            "xAxis": {"type": "category", "data": [bar["name"] for bar in bars]},
            "yAxis": {"type": "value", "name": invoice["currency"]},
            "series": [{"type": "bar", "data": [bar["value"] for bar in bars]}],
        },
        title="Amount by line",
    )


@invoice_view.suggest
def _invoice_next(invoice: dict[str, Any]) -> list[Suggestion]:
    if invoice["status"] == "paid":
        return []
    return [
        Suggestion("billing.remind", "Send a payment reminder"),
        Suggestion("billing.mark_paid", "Record the payment"),
    ]


@invoice_view.collection_ui
def _invoices_overview(invoices: list[dict[str, Any]]) -> list[ui.UIBlock]:
    table = ui.table(
        ["Invoice", "Customer", "Amount", "Status", "Due"],
        [
            [
                row["id"],
                row["customer_name"],
                money(row["amount_cents"], row["currency"]),
                row["status"],
                row["due_at"],
            ]
            for row in invoices
        ],
        title="Invoices",
    )
    currency = invoices[0]["currency"] if invoices else ""
    totals: Counter[str] = Counter()
    for row in invoices:
        totals[row["status"]] += row["amount_cents"]
    chart = ui.echarts(
        {
            "tooltip": {},
            "xAxis": {"type": "category", "data": list(STATUSES)},
            "yAxis": {"type": "value", "name": currency},
            "series": [{"type": "bar", "data": [totals[status] / 100 for status in STATUSES]}],
        },
        title="Amount by status",
    )
    return [table, chart]


@invoice_view.collection_suggest
def _invoices_next(invoices: list[dict[str, Any]]) -> Suggestion | None:
    overdue = sum(row["status"] == "overdue" for row in invoices)
    if not overdue:
        return None
    listed = "1 listed invoice is" if overdue == 1 else f"{overdue} listed invoices are"
    return Suggestion("billing.remind", f"Send payment reminders: {listed} overdue")


# -- customers -------------------------------------------------------------------------------

customer_view = Presenter("Customer", Customer)


@customer_view.suggest
def _customer_next(customer: dict[str, Any]) -> Suggestion:
    return Suggestion("billing.list_invoices", "See this customer's invoices")
