"""Build time of a 10,000-row response against pydantic-core's indented JSON of the same rows.

The response: 10,000 plain-dict rows (8 fields, one a nested customer object) as the data
block, three UI blocks (summary, a 5-row table, a chart), a directive, two rules and a
suggestion; the timed call makes the UI blocks and builds, as a handler would. The
baseline is ``pydantic_core.to_json(rows, indent=2)``: the cost of dumping the data alone.
Both are timed in the same run, interleaved, median of the runs.

Targets: build <= 1.3x the baseline (issue 2); with a non-reserved ``<`` in every row, so
the neutralization scan runs over the whole text, build <= 1.5x its baseline (issue 25).

Run: ``python -m benchmarks.wire [--json] [--runs N]``; with ``--json`` the last line is
one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import functools
import sys
from typing import Any

import pydantic_core

from benchmarks.timing import all_passed, medians_ms, report, target
from mcpfusion import ToolResponse, response, ui

ROWS = 10_000
MAX_BUILD_VS_BASELINE = 1.3
MAX_WITH_LT_VS_BASELINE = 1.5
STATUSES = ("draft", "open", "paid", "void")


def make_rows(count: int, note: str = "") -> list[dict[str, Any]]:
    """Plain-dict invoice rows: 8 fields, the last a nested customer object."""
    return [
        {
            "id": f"inv_{n:06d}",
            "number": f"2024-{n:06d}{note}",
            "status": STATUSES[n % 4],
            "amount_cents": 1_000 + (n * 37) % 500_000,
            "currency": "EUR",
            "issued_at": f"2024-{1 + n % 12:02d}-{1 + n % 28:02d}T09:00:00Z",
            "paid": n % 4 == 2,
            "customer": {
                "id": f"cus_{n % 977:04d}",
                "name": f"Customer {n % 977}",
                "email": f"billing{n % 977}@example.com",
            },
        }
        for n in range(count)
    ]


def build(rows: list[dict[str, Any]]) -> ToolResponse:
    """The response of the benchmark, UI blocks included."""
    total = sum(row["amount_cents"] for row in rows)
    head = [[r["id"], r["status"], r["amount_cents"] / 100] for r in rows[:5]]
    return (
        response(rows)
        .ui(
            ui.summary(f"{len(rows)} invoices, {total / 100:.2f} EUR in total.", priority=0),
            ui.table(["Invoice", "Status", "Amount"], head, title="Latest", width="half"),
            ui.echarts(
                {"series": [{"type": "pie", "data": [{"name": s, "value": 1} for s in STATUSES]}]},
                title="By status",
                width="half",
            ),
        )
        .directive("Show the summary before the table.")
        .rule("amount_cents is in CENTS. Divide by 100.", "Dates are UTC.")
        .suggest("billing.remind", "Send a payment reminder to overdue customers")
        .build()
    )


def measure(runs: int) -> dict[str, Any]:
    """Times build and baseline for plain rows and for rows holding a '<'."""
    figures: dict[str, Any] = {"rows": ROWS, "runs": runs, "cases": {}, "targets": {}}
    for case, rows in (("plain", make_rows(ROWS)), ("with_lt", make_rows(ROWS, " <b>"))):
        medians = medians_ms(
            {
                "baseline": functools.partial(pydantic_core.to_json, rows, indent=2),
                "build": functools.partial(build, rows),
            },
            runs=runs,
        )
        ratio = medians["build"] / medians["baseline"]
        figures["cases"][case] = {
            "baseline_ms": medians["baseline"],
            "build_ms": medians["build"],
            "ratio": round(ratio, 3),
            "data_bytes": len(build(rows).blocks[0].encode()),
        }
        if case == "plain":
            figures["targets"]["build_vs_baseline"] = target(ratio, MAX_BUILD_VS_BASELINE)
        else:
            figures["targets"]["with_lt_vs_baseline"] = target(ratio, MAX_WITH_LT_VS_BASELINE)
    return figures


def main(argv: list[str] | None = None) -> int:
    """Prints the timings and PASS/FAIL; returns 1 if the target fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="end with one JSON line of figures")
    parser.add_argument("--runs", type=int, default=15, help="timed runs per figure (>= 7)")
    args = parser.parse_args(argv)
    figures = measure(max(args.runs, 7))
    report(figures, args.json)
    return 0 if all_passed(figures) else 1


if __name__ == "__main__":
    sys.exit(main())
