"""Paging 10,000 rows with cursors (SPEC §5.4) against one limited answer, through the app.

The Presenter is ``benchmarks.presenter``'s invoice view (8 fields, a nested customer, two
rules, a summary and a suggestion) with a limit of 50, the billing example's page. Every
figure is a ``tools/call`` through ``Fusion.call_tool`` (routing, validation, the handler,
presentation), in-process so the transport's cost does not blur the comparison:

- ``limited``: one call of an action without paging over the 10,000 rows: 50 shown, the
  rest cut (what an agent got before cursors);
- ``first_page`` and ``next_page``: one call of the same action with ``paging=True``,
  without and with a cursor (sealing the next cursor, and opening the one sent);
- ``walk_all_in_memory``: following the cursors through all 200 pages, the handler
  returning every row each time and the Presenter slicing;
- ``walk_all_fetched``: the same walk, the handler returning ``Page`` of just the rows of
  ``ctx.page`` (as a database query would).

Target: a page with a cursor costs at most 1.5x the limited answer (sealing and checking a
cursor, and the structured content, must stay small beside presenting the rows).

Run: ``python -m benchmarks.paging [--json] [--rounds R]``; with ``--json`` the last line is
one JSON object of the figures.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from benchmarks.presenter import Invoice, make_rows
from benchmarks.timing import main_in_rounds, target
from mcpfusion import Context, Fusion, Page, Presenter, ToolResponse, suggest, ui

ROWS = 10_000
LIMIT = 50
MAX_PAGE_RATIO = 1.5


def build_app(rows: list[dict[str, Any]]) -> Fusion:
    """The benchmark's app: the same Presenter behind a limited and two paging actions."""
    view = Presenter(
        "Invoice",
        Invoice,
        limit=LIMIT,
        rules=["amount_cents is in CENTS. Divide by 100.", "Dates are UTC."],
    )

    @view.collection_ui
    def overview(invoices: list[dict[str, Any]]) -> Any:
        return ui.summary(f"{len(invoices)} invoices.")

    @view.collection_suggest
    def remind(invoices: list[dict[str, Any]]) -> Any:
        return suggest("invoices.all", "Every invoice")

    app = Fusion("bench", cursor_secret="benchmark secret of 32 bytes or more")
    tool = app.tool("invoices")

    @tool.action("all", returns=view, read_only=True)
    def all_rows() -> list[dict[str, Any]]:
        return rows

    @tool.action("paged", returns=view, read_only=True, paging=True)
    def paged() -> list[dict[str, Any]]:
        return rows

    @tool.action("fetched", returns=view, read_only=True, paging=True)
    def fetched(ctx: Context) -> Page:
        page = ctx.page
        assert page is not None
        return Page(rows[page.offset : page.offset + page.limit], total=len(rows))

    return app


def cursor_of(response: ToolResponse) -> str | None:
    """The next-page cursor of a page."""
    assert response.structured_content is not None
    cursor: str | None = response.structured_content["page"]["nextCursor"]
    return cursor


async def walk(app: Fusion, action: str) -> int:
    """Follows the cursors of ``action`` to the last page; returns the rows seen."""
    seen, cursor = 0, None
    while True:
        args: dict[str, Any] = {"action": action}
        if cursor is not None:
            args["_cursor"] = cursor
        response = await app.call_tool("invoices", args)
        assert response.structured_content is not None
        seen += int(response.structured_content["page"]["returned"])
        cursor = cursor_of(response)
        if cursor is None:
            return seen


async def best_ms(
    cases: dict[str, tuple[Callable[[], Awaitable[object]], int]], rounds: int
) -> dict[str, float]:
    """The best of ``rounds`` batches of each case, in milliseconds per call.

    Rounds are interleaved (one batch of every case per round), so a busy moment of the
    machine lands on all the figures alike instead of skewing one ratio.
    """
    for fn, _ in cases.values():
        await fn()  # warm-up
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (fn, repeat) in cases.items():
            gc.collect()
            start = time.perf_counter()
            for _ in range(repeat):
                await fn()
            times[name].append((time.perf_counter() - start) / repeat * 1e3)
    return {name: round(min(values), 3) for name, values in times.items()}


async def measure(rounds: int) -> dict[str, Any]:
    """Times every case; checks that both walks see every row once."""
    app = build_app(make_rows(ROWS))
    second = await app.call_tool("invoices", {"action": "paged"})
    cursor = cursor_of(second)
    if await walk(app, "paged") != ROWS or await walk(app, "fetched") != ROWS:
        raise AssertionError("a walk did not see every row once")

    async def limited() -> object:
        return await app.call_tool("invoices", {"action": "all"})

    async def first_page() -> object:
        return await app.call_tool("invoices", {"action": "paged"})

    async def next_page() -> object:
        return await app.call_tool("invoices", {"action": "paged", "_cursor": cursor})

    async def walk_memory() -> object:
        return await walk(app, "paged")

    async def walk_fetched() -> object:
        return await walk(app, "fetched")

    figures = await best_ms(
        {
            "limited_ms": (limited, 20),
            "first_page_ms": (first_page, 20),
            "next_page_ms": (next_page, 20),
            "walk_all_in_memory_ms": (walk_memory, 1),
            "walk_all_fetched_ms": (walk_fetched, 1),
        },
        rounds,
    )
    pages = ROWS // LIMIT
    ratio = figures["next_page_ms"] / figures["limited_ms"]
    return {
        "rows": ROWS,
        "page_rows": LIMIT,
        "pages": pages,
        **figures,
        "walk_per_page_fetched_ms": round(figures["walk_all_fetched_ms"] / pages, 3),
        "walk_vs_limited": round(figures["walk_all_fetched_ms"] / figures["limited_ms"], 1),
        "targets": {"next_page_vs_limited": target(ratio, MAX_PAGE_RATIO)},
    }


def main(argv: list[str] | None = None) -> int:
    """Prints the figures and PASS/FAIL; returns 1 if the target fails."""
    return main_in_rounds(measured, __doc__.splitlines()[0], argv, rounds=5)


def measured(rounds: int) -> dict[str, Any]:
    """``measure`` on an event loop of its own."""
    return anyio.run(measure, rounds)


if __name__ == "__main__":
    sys.exit(main())
