"""The billing example's resource, prompt and completions, through the same Presenters.

``billing://invoices/{invoice_id}`` reads an invoice as ``billing.get_invoice`` shows it;
``collections_call`` prepares a call about a customer's overdue invoices from the customer
and invoice views; both complete ids from the caller's tenant only. Hosts that support MCP
Apps render the invoices' charts and tables with the renderer served at ``ui://``.
"""

from __future__ import annotations

from typing import Any

from examples.billing.access import BillingState, CustomerId, InvoiceId, ledger, not_found
from examples.billing.presenters import customer_view, invoice_view
from mcpfusion import Context, Fusion, Message, messages_from_view, user

SUGGESTED = 20
"""At most this many ids are offered per completion."""


def define_surface(app: Fusion) -> None:
    """Adds the invoice resource, the ``collections_call`` prompt and their completions,
    and serves the renderer as an MCP App for the tools whose Presenters send UI."""
    app.enable_ui_app()

    @app.resource(
        "billing://invoices/{invoice_id}",
        returns=invoice_view,
        requires={"billing:read"},
        description="One invoice with its lines, as billing.get_invoice shows it.",
    )
    def invoice(state: BillingState, ctx: Context, invoice_id: InvoiceId) -> dict[str, Any]:
        found = ledger(state, ctx).get_invoice(invoice_id)
        if found is None:
            raise not_found("Invoice", invoice_id, "billing.list_invoices")
        return found

    @invoice.complete("invoice_id")
    def invoice_ids(state: BillingState, ctx: Context, value: str) -> list[str]:
        rows = ledger(state, ctx).list_invoices()
        return [row["id"] for row in rows if row["id"].startswith(value.upper())][:SUGGESTED]

    @app.prompt(requires={"billing:read"})
    def collections_call(
        state: BillingState, ctx: Context, customer_id: CustomerId
    ) -> list[Message]:
        """Prepare a collections call with a customer about their overdue invoices."""
        books = ledger(state, ctx)
        customer = books.get_customer(customer_id)
        if customer is None:
            raise not_found("Customer", customer_id, "customers.list_customers")
        overdue = books.list_invoices("overdue", customer_id)
        return [
            # Only the validated id is written here: names and notes reach the model
            # through the Presenters, masked and neutralized, never interpolated.
            user(
                f"Prepare a collections call with customer {customer_id}. The customer and "
                f"their {len(overdue)} overdue invoices follow. Open politely, state the "
                "amounts due with their due dates, and agree on a payment date."
            ),
            *messages_from_view(customer_view, customer, ctx),
            *messages_from_view(invoice_view, overdue, ctx),
        ]

    @collections_call.complete("customer_id")
    def customer_ids(state: BillingState, ctx: Context, value: str) -> list[str]:
        rows = ledger(state, ctx).list_customers()
        return [row["id"] for row in rows if row["id"].startswith(value.upper())][:SUGGESTED]
