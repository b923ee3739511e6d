"""Redaction's cost (SPEC §16): the same Presenter over 10,000 rows with and without it.

The Presenter is ``benchmarks.presenter``'s invoice view (8 fields, a nested customer, two
rules, a summary and a suggestion) with a free-text ``note`` on every invoice (one in ten
quotes the customer's email, the others a payment reference), plus a collection UI table that
echoes the first 50 invoices' numbers and customer emails, so both searches have real text
to scan and real values to find. The redacting copy redacts ``number`` and
``customer.email``: 10,000 values censored in the data, about 11,000 traces searched for in
the notes (1,000 found) and in the other blocks (100 found in the table).

Target (issue 11): present + build with redaction <= 1.3x the same Presenter without it.

Run: ``python -m benchmarks.redaction [--json] [--rounds R]``; with ``--json`` the last
line is one JSON object of the figures.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from benchmarks.presenter import Invoice, make_rows
from benchmarks.timing import best_seconds, main_in_rounds, target
from mcpfusion import Presenter, Suggestion, UIBlock, suggest, ui

ROWS = 10_000
MAX_RATIO = 1.3
REDACT = ("number", "customer.email")


class NotedInvoice(Invoice):
    """The invoice with a free-text note a person typed."""

    note: str


def noted_rows(count: int) -> list[dict[str, Any]]:
    """``make_rows`` with a note on each: every tenth quotes the customer's email."""
    rows = make_rows(count)
    for n, row in enumerate(rows):
        if n % 10 == 0:
            row["note"] = f"Customer asked to send the PDF to {row['customer']['email']} instead."
        else:
            row["note"] = f"Paid by bank transfer, reference TRX-{n * 7919 % 1_000_003:07d}."
    return rows


def invoice_view(redact: tuple[str, ...]) -> Presenter:
    """The benchmark's Presenter, redacting ``redact``."""
    view = Presenter(
        "Invoice",
        NotedInvoice,
        rules=["amount_cents is in CENTS. Divide by 100.", "Dates are UTC."],
        redact=redact,
    )

    @view.collection_ui
    def overview(invoices: list[dict[str, Any]]) -> list[UIBlock]:
        total = sum(invoice["amount_cents"] for invoice in invoices)
        table = ui.table(
            ["Number", "Customer", "Email", "Amount"],
            [
                [i["number"], i["customer"]["name"], i["customer"]["email"], i["amount_cents"]]
                for i in invoices[:50]
            ],
        )
        return [ui.summary(f"{len(invoices)} invoices, {total / 100:.2f} EUR in total."), table]

    @view.collection_suggest
    def remind(invoices: list[dict[str, Any]]) -> Suggestion | None:
        if any(invoice["status"] == "open" for invoice in invoices):
            return suggest("billing.remind", "Send a payment reminder")
        return None

    return view


def measure(rounds: int) -> dict[str, Any]:
    """Times both Presenters on the same rows, interleaved."""
    rows = noted_rows(ROWS)
    plain, redacting = invoice_view(()), invoice_view(REDACT)
    leaked = [
        value
        for value in ("2024-000000", "billing0@example.com", "billing976@example.com")
        if value in (redacting.present(rows).text)
    ]
    if leaked:
        raise AssertionError(f"redacted values reached the response: {leaked}")
    best = best_seconds(
        {
            "plain": functools.partial(plain.present, rows),
            "redacted": functools.partial(redacting.present, rows),
        },
        rounds,
    )
    ratio = best["redacted"] / best["plain"]
    return {
        "rows": ROWS,
        "plain_ms": round(best["plain"] * 1e3, 3),
        "redacted_ms": round(best["redacted"] * 1e3, 3),
        "targets": {"redacted_vs_plain_10k": target(ratio, MAX_RATIO)},
    }


def main(argv: list[str] | None = None) -> int:
    """Prints the figures and PASS/FAIL; returns 1 if the target fails."""
    return main_in_rounds(measure, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    sys.exit(main())
