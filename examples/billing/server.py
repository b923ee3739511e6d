"""The billing example's tools: invoices, customers and a revenue report over ``BillingDB``.

The database opens in the app's lifespan, once per server process; every handler reads
its caller's tenant's ledger only, so no tool can reach another tenant's rows.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

import anyio.to_thread
from pydantic import BaseModel, Field

from examples.billing.access import (
    BillingState,
    CustomerId,
    InvoiceId,
    ledger,
    not_found,
)
from examples.billing.db import BillingDB, Ledger
from examples.billing.presenters import Status, customer_view, invoice_view
from examples.billing.surface import define_surface
from examples.billing.tenants import LOCAL_OPERATOR
from mcpfusion import (
    Confirm,
    Context,
    Fusion,
    Page,
    ToolError,
    ToolResponse,
    Workflow,
    toon_success,
)
from mcpfusion.middleware import audit_log


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


PAYMENT_REVIEW = Workflow(
    ["browsing", "reviewed"],
    initial="browsing",
    transitions=[
        ("billing.review", "*", "reviewed"),
        ("billing.mark_paid", "reviewed", "browsing"),
    ],
    allowed={"billing.mark_paid": ["reviewed"]},
    name="payment",
)
"""A payment is recorded only by a caller who just reviewed an invoice (``review_payments``)."""


def create_app(
    db_path: str | os.PathLike[str],
    *,
    data_format: Literal["json", "compact", "toon"] | None = None,
    ui_audience: Literal["user", "all"] | None = None,
    definitions: Literal["full", "lean"] = "lean",
    review_payments: bool = False,
) -> Fusion:
    """Builds the billing server over the database at ``db_path``, opened when it starts.

    Tools ``billing``, ``customers`` and ``reports``; reading needs ``billing:read``,
    ``remind`` and ``mark_paid`` need ``billing:write``. Its tool definitions are lean
    unless told (no token spent on what the model learns elsewhere); ``data_format`` and
    ``ui_audience`` are the app's choices for its Presenters (the app's defaults, TOON and
    UI blocks for the user, unless given).

    With ``review_payments`` a payment follows a small workflow (``PAYMENT_REVIEW``):
    ``billing.review`` an invoice first, then ``mark_paid`` that very invoice; until the
    caller reviewed, ``mark_paid`` is refused (``OUT_OF_STATE``) naming ``review``, and
    one caller's payments run one at a time.

    Raises (when serving starts):
        BillingDatabaseError: if the database cannot be opened or seeded.
    """

    @asynccontextmanager
    async def lifespan(app: Fusion) -> AsyncIterator[BillingState]:
        db = BillingDB.open(db_path)
        try:
            yield BillingState(db)
        finally:
            db.close()

    app = Fusion(
        "billing-server",
        version="0.1.0",
        lifespan=lifespan,
        local_identity=LOCAL_OPERATOR,
        definitions=definitions,
        data_format=data_format,
        ui_audience=ui_audience,
        workflow=PAYMENT_REVIEW if review_payments else None,
        serialize_destructive=review_payments,
    )
    app.middleware(audit_log())
    billing = app.tool(
        "billing",
        description="Invoices: list, read, remind, record payments.",
        requires={"billing:read"},
    )
    billing.enable_select()

    @billing.action(
        "list_invoices",
        description="List invoices, newest last; filter by status or customer.",
        returns=invoice_view,
        read_only=True,
        paging=True,
    )
    def list_invoices(
        state: BillingState,
        ctx: Context,
        status: Annotated[Status | None, Field(description="Only this status.")] = None,
        customer_id: Annotated[str | None, Field(description="Only this customer.")] = None,
    ) -> Page:
        # Only the page asked for leaves the database; the cursor the agent sends back is
        # bound to this caller, its tenant and these filters.
        books, page = ledger(state, ctx), ctx.page
        assert page is not None  # a paging action always has one
        rows = books.list_invoices(status, customer_id, offset=page.offset, limit=page.limit)
        return Page(rows, total=books.count_invoices(status, customer_id))

    def invoice_or_error(books: Ledger, invoice_id: str) -> dict[str, Any]:
        # Another tenant's invoice is None here too: the same NOT_FOUND, word for word.
        invoice = books.get_invoice(invoice_id)
        if invoice is None:
            raise not_found("Invoice", invoice_id, "billing.list_invoices")
        return invoice

    @billing.action(
        "get_invoice",
        description="One invoice with its lines.",
        returns=invoice_view,
        read_only=True,
    )
    async def get_invoice(
        state: BillingState, ctx: Context, invoice_id: InvoiceId
    ) -> dict[str, Any]:
        # A point read by key takes tens of microseconds and, in WAL mode, never waits for a
        # writer: it runs on the event loop. A worker thread's round trip would cost more
        # than the read. Scans (the lists, the report) and writes run in threads.
        return invoice_or_error(ledger(state, ctx), invoice_id)

    @billing.action(
        "remind",
        description="Send a payment reminder; sending it twice is harmless.",
        idempotent=True,
        requires={"billing:read", "billing:write"},
        loggable=["invoice_id"],
    )
    async def remind(state: BillingState, ctx: Context, invoice_id: InvoiceId) -> None:
        # The database call runs in a thread, to its end even when the call is cancelled:
        # the change is committed only if the call is still wanted.
        books = ledger(state, ctx)
        outcome = await anyio.to_thread.run_sync(
            lambda: books.record_reminder(invoice_id, proceed=lambda: not ctx.cancelled)
        )
        if outcome == "done":
            # What the client's log shows: the id only, never the customer's details.
            await ctx.log(
                "info", f"Payment reminder sent for {invoice_id}.", {"invoice_id": invoice_id}
            )
        if outcome == "unknown":
            raise not_found("Invoice", invoice_id, "billing.list_invoices")
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
        requires={"billing:read", "billing:write"},
        loggable=["invoice_id"],
        # Asks the user first when the client can ask; a client that cannot still pays.
        confirm=Confirm("Record the payment of invoice {invoice_id}?", unsupported="proceed"),
        # Paying changes the invoice lists and the revenue report (SPEC §15).
        invalidates=["billing.*", "reports.*"],
    )
    async def mark_paid(state: BillingState, ctx: Context, invoice_id: InvoiceId) -> dict[str, Any]:
        if review_payments and await ctx.caller_state.get("reviewed") != invoice_id:
            raise ToolError(
                "NOT_REVIEWED",
                f"Invoice {invoice_id} is not the invoice you reviewed.",
                recovery=f"Call billing.review for {invoice_id} first.",
                available_actions=["billing.review"],
            )
        books = ledger(state, ctx)
        outcome = await anyio.to_thread.run_sync(
            lambda: books.mark_paid(invoice_id, proceed=lambda: not ctx.cancelled)
        )
        if outcome == "unknown":
            raise not_found("Invoice", invoice_id, "billing.list_invoices")
        if outcome == "paid":
            raise ToolError(
                "CONFLICT",
                f"Invoice {invoice_id} is already paid.",
                recovery="Nothing to do; call billing.get_invoice to see it.",
                available_actions=["billing.get_invoice"],
            )
        if review_payments:
            await ctx.caller_state.delete("reviewed")
        return invoice_or_error(books, invoice_id)

    if review_payments:

        @billing.action(
            "review",
            description="Review an invoice before recording its payment.",
            returns=invoice_view,
            read_only=True,
        )
        async def review(
            state: BillingState, ctx: Context, invoice_id: InvoiceId
        ) -> dict[str, Any]:
            invoice = invoice_or_error(ledger(state, ctx), invoice_id)
            # The caller's state, not a session's: the next call may reach another worker.
            await ctx.caller_state.set("reviewed", invoice_id, ttl=3600)
            return invoice

    customers = app.tool(
        "customers", description="Customers: list and read.", requires={"billing:read"}
    )
    customers.toon_description()

    @customers.action(
        "list_customers", description="List customers, optionally by country.", read_only=True
    )
    def list_customers(
        state: BillingState,
        ctx: Context,
        country: Annotated[
            str | None, Field(description="ISO 3166-1 alpha-2 code, e.g. DE.")
        ] = None,
    ) -> ToolResponse:
        rows = ledger(state, ctx).list_customers(country)
        # The projection is the whitelist here: TOON rows of four public columns.
        return toon_success(
            [{k: row[k] for k in ("id", "name", "email", "country")} for row in rows]
        )

    @customers.action(
        "get_customer", description="One customer.", returns=customer_view, read_only=True
    )
    async def get_customer(
        state: BillingState, ctx: Context, customer_id: CustomerId
    ) -> dict[str, Any]:
        # A point read, on the event loop like get_invoice.
        customer = ledger(state, ctx).get_customer(customer_id)
        if customer is None:
            raise not_found("Customer", customer_id, "customers.list_customers")
        return customer

    reports = app.tool(
        "reports", description="Reports over the invoices.", requires={"billing:read"}
    )

    @reports.action(
        "revenue",
        description="Paid and outstanding amounts per month of issue.",
        output_schema=RevenueReport,
        read_only=True,
    )
    def revenue(
        state: BillingState,
        ctx: Context,
        year: Annotated[int, Field(ge=2000, le=2100, description="Calendar year, e.g. 2024.")],
    ) -> dict[str, Any]:
        return ledger(state, ctx).revenue(year)

    define_surface(app)  # the invoice resource, the collections prompt, completions
    return app
