"""One-row calls beside a 100,000-row call: how long the big presentation stalls the loop.

The work of ``tests/e2e/test_off_loop.py``, which keeps the behaviour (one-row calls finish
while the big call is presented) while this module keeps the bound, as a ratio so a busy
machine moves both sides of it: the slowest one-row call's lateness (from when it was
due, so a stalled event loop counts against it) over the big call's own duration. A
presentation run on the event loop would stall every one-row call for the whole big call,
a ratio near 1; presented off the loop, each waits a small part of it. Target: <= 0.5.

Each figure is the median of the runs.

Run: ``python -m benchmarks.off_loop [--json] [--runs N]``; with ``--json`` the last line is
one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from typing import Any

import anyio
from pydantic import BaseModel

from benchmarks.timing import all_passed, report, target
from mcpfusion import Fusion, Presenter, ui

BIG = 100_000
MAX_STALL_VS_BIG_CALL = 0.5
SMALL_EVERY_S = 0.005


class Row(BaseModel):
    """A six-field row, as a list endpoint returns it."""

    id: int
    name: str
    email: str
    amount_cents: int
    status: str
    city: str


def rows() -> list[dict[str, Any]]:
    """The big call's rows, each with a field the Presenter masks."""
    return [
        {
            "id": n,
            "name": f"Customer {n}",
            "email": f"c{n}@example.com",
            "amount_cents": n * 7,
            "status": "paid",
            "city": "Lisbon",
            "tenant_id": "t-1",
        }
        for n in range(BIG)
    ]


def big_app(listed: list[dict[str, Any]]) -> Fusion:
    """An app whose ``rows`` tool presents all of ``listed`` (``all``) or its first (``one``)."""
    view = Presenter("Row", Row)

    @view.collection_ui
    def count(shown: list[dict[str, Any]]) -> ui.UIBlock:
        return ui.summary(f"{len(shown)} rows")

    app = Fusion("app", data_format="json")  # the stall measured is indented JSON's, as before
    tool = app.tool("rows")

    @tool.action("all", returns=view)
    async def all_rows() -> list[dict[str, Any]]:
        return listed

    # Async, so its latency is the event loop's, not a worker thread's turn at the GIL.
    @tool.action("one", returns=view)
    async def one_row() -> dict[str, Any]:
        return listed[0]

    return app


async def beside_the_big_call(app: Fusion) -> tuple[list[float], float, int]:
    """One-row calls while the big call runs: each one's lateness, the big call's time, and
    how many one-row calls finished while it ran.

    Each small call is due ``SMALL_EVERY_S`` after the previous one ended; its lateness
    runs from when it was due, in seconds. The small calls stop once the big one is done.
    """
    await app.call_tool("rows", {"action": "one"})  # warm up
    late: list[float] = []
    during = 0
    big_started = anyio.Event()
    big_done = anyio.Event()

    async def small_calls() -> None:
        nonlocal during
        for _ in range(400):
            due = time.perf_counter() + SMALL_EVERY_S
            await anyio.sleep(SMALL_EVERY_S)
            await app.call_tool("rows", {"action": "one"})
            late.append(time.perf_counter() - due)
            if big_done.is_set():
                return
            during += big_started.is_set()

    # What is measured is the framework's stall, not a full collection of the process's
    # objects (the 100k input rows), which CPython may start at any allocation.
    gc.collect()
    gc.freeze()
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(small_calls)
            await anyio.sleep(0.01)
            big_started.set()
            start = time.perf_counter()
            result = await app.call_tool("rows", {"action": "all"})
            took = time.perf_counter() - start
            big_done.set()
    finally:
        gc.unfreeze()
    assert not result.is_error and result.blocks[0].count('"id"') == BIG
    return late, took, during


def measure(runs: int) -> dict[str, Any]:
    """Runs the big call with one-row calls beside it ``runs`` times; checks the ratio."""
    app = big_app(rows())
    stalls, bigs, ratios = [], [], []
    for _ in range(runs):
        late, took, _ = anyio.run(beside_the_big_call, app)
        stalls.append(max(late))
        bigs.append(took)
        ratios.append(max(late) / took)
    return {
        "runs": runs,
        "rows": BIG,
        "big_call_ms": round(statistics.median(bigs) * 1000, 1),
        "slowest_one_row_late_ms": round(statistics.median(stalls) * 1000, 1),
        "targets": {"stall_vs_big_call": target(statistics.median(ratios), MAX_STALL_VS_BIG_CALL)},
    }


def main(argv: list[str] | None = None) -> int:
    """Prints the figures and PASS/FAIL; returns 1 if the bound is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="end with one JSON line of figures")
    parser.add_argument("--runs", type=int, default=7, help="timed runs (>= 5)")
    args = parser.parse_args(argv)
    figures = measure(max(args.runs, 5))
    report(figures, args.json)
    return 0 if all_passed(figures) else 1


if __name__ == "__main__":
    sys.exit(main())
