"""Presenter throughput against raw pydantic-core JSON, measured in the same run.

The case is issue 3's: an invoice Presenter with 8 fields (one a nested customer), two
static rules, a collection summary UI block and a collection suggestion, over rows that
carry three undeclared fields each (two at the top level, a ``password_hash`` in the
customer). ``present + build`` is timed for N = 1,000, 10,000 and 100,000 rows without a
limit and for 100,000 rows with a limit of 1,000. The baseline is
``pydantic_core.to_json(rows, indent=2)`` on the raw rows: what dumping the data costs
without masking, rules or UI.

Targets: present + build <= 2.0x the baseline at 10,000 and 100,000 rows; the limited
100,000-row case within 1.2x the unlimited 1,000-row case (dropped rows cost nothing).
Peak memory is measured with tracemalloc in separate runs, so tracing never slows the
timed ones.

A second shape is the TypeScript reference benchmark's (issue 12): a flat invoice row and a
collection callback that renders every row as a table. Targets: the per-row cost at
100,000 rows within 1.15x the per-row cost at 10,000 (presenting scales linearly), and the
peak memory of presenting 100,000 rows within 2.5x the rows' own size.

Run: ``python -m benchmarks.presenter [--json] [--rounds R]``; with ``--json`` the last
line is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import gc
import json
import statistics
import sys
import tracemalloc
from collections.abc import Callable
from typing import Any, Literal

import pydantic_core
from pydantic import BaseModel

from benchmarks.timing import batched_seconds
from mcpfusion import Presenter, Suggestion, UIBlock, suggest, ui

RATIO_BASELINE = 2.0
RATIO_LIMITED = 1.2
RATIO_LINEAR = 1.15
RATIO_MEMORY = 2.5
TABLE_SIZES = (10_000, 100_000)
SIZES = (1_000, 10_000, 100_000)
LIMITED_ROWS = 100_000
LIMIT = 1_000


class Customer(BaseModel):
    """The customer as the agent may see it."""

    id: str
    name: str
    email: str


class Invoice(BaseModel):
    """The invoice as the agent may see it: 8 fields, one of them a nested object."""

    id: str
    number: str
    status: Literal["draft", "open", "paid", "void"]
    amount_cents: int
    currency: str
    issued_at: datetime.datetime
    due_date: datetime.date
    customer: Customer


STATUSES = ("draft", "open", "paid", "void")
EPOCH = datetime.datetime(2024, 1, 1, 9, 0, tzinfo=datetime.UTC)


def make_rows(count: int) -> list[dict[str, Any]]:
    """Database-like rows: the 8 declared fields plus three undeclared ones."""
    return [
        {
            "id": f"inv_{n:06d}",
            "number": f"2024-{n:06d}",
            "status": STATUSES[n % 4],
            "amount_cents": 1_000 + (n * 37) % 500_000,
            "currency": "EUR",
            "issued_at": EPOCH + datetime.timedelta(minutes=n),
            "due_date": (EPOCH + datetime.timedelta(days=30 + n % 60)).date(),
            "customer": {
                "id": f"cus_{n % 977:04d}",
                "name": f"Customer {n % 977}",
                "email": f"billing{n % 977}@example.com",
                "password_hash": "pbkdf2_sha256$600000$c2FsdA$aGFzaA",
            },
            "tenant_id": 42,
            "internal_note": "reviewed by finance",
        }
        for n in range(count)
    ]


def invoice_view(limit: int | None = None) -> Presenter:
    """The Presenter of the benchmark."""
    view = Presenter(
        "Invoice",
        Invoice,
        limit=limit,
        rules=["amount_cents is in CENTS. Divide by 100.", "Dates are UTC."],
    )

    @view.collection_ui
    def summary(invoices: list[dict[str, Any]]) -> UIBlock:
        total = sum(invoice["amount_cents"] for invoice in invoices)
        return ui.summary(f"{len(invoices)} invoices, {total / 100:.2f} EUR in total.")

    @view.collection_suggest
    def remind(invoices: list[dict[str, Any]]) -> Suggestion | None:
        if any(invoice["status"] == "open" for invoice in invoices):
            return suggest("billing.remind", "Send a payment reminder")
        return None

    return view


class TableInvoice(BaseModel):
    """The reference benchmark's row as the agent may see it."""

    id: str
    customer: str
    amount: float
    status: str
    created_at: str


def make_table_rows(count: int) -> list[dict[str, Any]]:
    """Flat rows of the reference benchmark's shape, with two undeclared fields."""
    return [
        {
            "id": f"INV-{n:06d}",
            "customer": f"Customer {n % 977}",
            "amount": round((n * 37) % 500_000 / 100, 2),
            "status": STATUSES[n % 4],
            "created_at": f"2024-{1 + n % 12:02d}-{1 + n % 28:02d}",
            "internal_cost": n * 3,
            "tenant_id": 42,
        }
        for n in range(count)
    ]


def table_view() -> Presenter:
    """The reference benchmark's Presenter: a rule and a table of every row."""
    view = Presenter("Invoice", TableInvoice, rules=["amount is in EUR."])

    @view.collection_ui
    def table(invoices: list[dict[str, Any]]) -> UIBlock:
        return ui.table(
            ["ID", "Customer", "Amount", "Status"],
            [[i["id"], i["customer"], i["amount"], i["status"]] for i in invoices],
        )

    return view


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak traced Python memory during one call, beyond what was allocated before it."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before


LIMITED = f"n{LIMITED_ROWS}_limit{LIMIT}"


def measure(rounds: int) -> dict[str, Any]:
    """Times every case against its baseline, then measures peak memory in separate runs."""
    unlimited, limited = invoice_view(), invoice_view(limit=LIMIT)
    cases = {f"n{n}": (make_rows(n), unlimited) for n in SIZES}
    cases[LIMITED] = (make_rows(LIMITED_ROWS), limited)
    calls: dict[str, Callable[[], object]] = {}
    for name, (rows, view) in cases.items():
        if name != LIMITED:  # its baseline would be n100000's again
            calls[f"{name}/baseline"] = functools.partial(pydantic_core.to_json, rows, indent=2)
        calls[f"{name}/present"] = functools.partial(view.present, rows)
    samples = batched_seconds(calls, rounds)
    figures: dict[str, Any] = {}
    for name, (rows, _) in cases.items():
        present = samples[f"{name}/present"]
        row: dict[str, Any] = {
            "rows": len(rows),
            "present_ms": round(min(present) * 1e3, 3),
            "present_median_ms": round(statistics.median(present) * 1e3, 3),
            "present_us_per_row": round(min(present) * 1e6 / len(rows), 3),
        }
        baseline = samples.get(f"{name}/baseline")
        if baseline is not None:
            row["baseline_ms"] = round(min(baseline) * 1e3, 3)
            row["baseline_median_ms"] = round(statistics.median(baseline) * 1e3, 3)
            row["ratio"] = round(min(present) / min(baseline), 3)
        figures[name] = row
    for name, call in calls.items():
        case, kind = name.split("/")
        figures[case][f"{kind}_peak_mib"] = round(peak_bytes(call) / 2**20, 2)
    table = table_view()
    table_rows = {n: make_table_rows(n) for n in TABLE_SIZES}
    timed = batched_seconds(
        {f"table{n}": functools.partial(table.present, rows) for n, rows in table_rows.items()},
        rounds,
    )
    for n in TABLE_SIZES:
        best = min(timed[f"table{n}"])
        figures[f"table{n}"] = {
            "rows": n,
            "present_ms": round(best * 1e3, 3),
            "present_median_ms": round(statistics.median(timed[f"table{n}"]) * 1e3, 3),
            "present_us_per_row": round(best * 1e6 / n, 3),
        }
    largest = TABLE_SIZES[-1]
    figures[f"table{largest}"]["rows_mib"] = round(
        peak_bytes(functools.partial(make_table_rows, largest)) / 2**20, 2
    )
    figures[f"table{largest}"]["present_peak_mib"] = round(
        peak_bytes(functools.partial(table.present, table_rows[largest])) / 2**20, 2
    )
    return figures


def targets(figures: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The issue's targets, each with its measured ratio and whether it passes."""
    limited = figures[LIMITED]["present_ms"] / figures["n1000"]["present_ms"]
    small, large = (figures[f"table{n}"] for n in TABLE_SIZES)
    linear = large["present_us_per_row"] / small["present_us_per_row"]
    memory = large["present_peak_mib"] / large["rows_mib"]
    checks = {
        "present_vs_baseline_10k": (figures["n10000"]["ratio"], RATIO_BASELINE),
        "present_vs_baseline_100k": (figures["n100000"]["ratio"], RATIO_BASELINE),
        "limited_100k_vs_unlimited_1k": (round(limited, 3), RATIO_LIMITED),
        "table_per_row_100k_vs_10k": (round(linear, 3), RATIO_LINEAR),
        "table_peak_memory_vs_rows_100k": (round(memory, 3), RATIO_MEMORY),
    }
    return {
        name: {"ratio": ratio, "max": bound, "pass": ratio <= bound}
        for name, (ratio, bound) in checks.items()
    }


def main(argv: list[str] | None = None) -> int:
    """Runs the benchmark and prints its figures (and, with --json, one JSON line)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds per figure")
    args = parser.parse_args(argv)
    figures = measure(args.rounds)
    print(f"{'case':<20}{'baseline ms':>12}{'present ms':>12}{'us/row':>8}{'ratio':>7}", end="")
    print(f"{'base MiB':>10}{'pres MiB':>10}")
    for name, row in figures.items():
        print(
            f"{name:<20}{row.get('baseline_ms', float('nan')):>12.2f}{row['present_ms']:>12.2f}"
            f"{row['present_us_per_row']:>8.3f}{row.get('ratio', float('nan')):>7.2f}"
            f"{row.get('baseline_peak_mib', float('nan')):>10.2f}"
            f"{row.get('present_peak_mib', float('nan')):>10.2f}"
        )
    checks = targets(figures)
    for name, check in checks.items():
        verdict = "PASS" if check["pass"] else "FAIL"
        print(f"{verdict} {name}: {check['ratio']:.2f}x (target <= {check['max']}x)")
    if args.json:
        print(json.dumps({"cases": figures, "targets": checks}, sort_keys=True))
    return 0 if all(check["pass"] for check in checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
