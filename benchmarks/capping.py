"""The byte cap's cost (SPEC §17): 10,000 rows capped at 64 KiB against the uncapped answer.

The rows are ``benchmarks.presenter``'s invoices through its Presenter (8 fields, a nested
customer, two rules, a summary UI block), called through ``Fusion.call_tool`` as a server
does, in TOON (the app default). Capped, the answer keeps the leading rows that fit in
64 KiB: it is made once whole (to learn it is over), then a few times from about as many
rows as fit, while the search for the run's end brackets it. The third figure is the
uncapped answer of exactly the rows the capped one keeps: what the cap would cost if the
run were known in advance.

Target (issue 27): a capped answer of 10,000 rows <= 1.5x the uncapped answer of all of
them, so a cap never makes a large answer much slower than not capping it.

Run: ``python -m benchmarks.capping [--json] [--rounds R]``; with ``--json`` the last line
is one JSON object of the figures.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import anyio

from benchmarks.presenter import invoice_view, make_rows
from benchmarks.timing import best_seconds, main_in_rounds, target
from mcpfusion import Fusion, ToolResponse

ROWS = 10_000
CAP = 64 * 1024
MAX_RATIO = 1.5


def _app(cap: int | None) -> Fusion:
    app = Fusion("bench", max_bytes=cap)
    view = invoice_view()
    rows = make_rows(ROWS)

    billing = app.tool("billing")

    @billing.action(read_only=True, returns=view)
    def invoices(count: int = ROWS) -> list[dict[str, Any]]:
        """Invoices."""
        return rows[:count]

    @billing.action
    def remind() -> None:
        """What the Presenter's suggestion names."""

    return app


def _caller(app: Fusion, count: int = ROWS) -> Callable[[], ToolResponse]:
    async def call() -> ToolResponse:
        return await app.call_tool("billing", {"action": "invoices", "count": count})

    return lambda: anyio.run(call)


def measure(rounds: int) -> dict[str, Any]:
    """Times the uncapped, capped and kept-rows answers, interleaved."""
    capped = _caller(_app(CAP))()
    sent = capped.blocks[0]
    kept = int(sent[1 : sent.index("|")])  # the TOON header [N|]{…}: N rows were kept
    size = sum(len(block.encode()) for block in capped.blocks)
    if size > CAP or capped.is_error:
        raise AssertionError(f"the capped answer is {size} bytes (error: {capped.is_error})")
    best = best_seconds(
        {
            "uncapped": _caller(_app(None)),
            "capped": _caller(_app(CAP)),
            "kept_rows_uncapped": _caller(_app(None), kept),
        },
        rounds,
    )
    return {
        "rows": ROWS,
        "cap_bytes": CAP,
        "rows_kept": kept,
        "answer_bytes": size,
        "uncapped_ms": round(best["uncapped"] * 1e3, 2),
        "capped_ms": round(best["capped"] * 1e3, 2),
        "kept_rows_uncapped_ms": round(best["kept_rows_uncapped"] * 1e3, 2),
        "targets": {"capped_vs_uncapped_10k": target(best["capped"] / best["uncapped"], MAX_RATIO)},
    }


def main(argv: list[str] | None = None) -> int:
    """Prints the figures and PASS/FAIL; returns 1 if the target fails."""
    return main_in_rounds(measure, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    sys.exit(main())
