"""Per-call latency of the in-process call path, against calling the handler directly.

Each figure is one call through ``FusionTester`` (routing, validation, context, handler,
wrapping, and splitting the result by kind):

* ``trivial``: an async action returning a short string;
* ``trivial_sync``: the same as a sync handler, which runs in a worker thread;
* ``presented``: a ``get_invoice``-like async action whose one row goes through a
  Presenter with rules, a UI block and a suggestion;
* ``baseline``: the same ``get_invoice`` handler awaited directly and its row serialized
  with ``pydantic_core.to_json`` — the least any framework could do;
* ``presenter_direct``: the handler awaited directly and its row presented, without the
  call path — so ``presented - presenter_direct`` is what routing, validation, the context
  and the tester add;
* ``secured``: the ``presented`` call on an app serving real users: its API key verified
  (hashed and compared), the action's scope checked, an audit record made (the
  ``mcpfusion.audit`` logger on, its handler writing nowhere: the framework's cost, not the
  disk's) and a per-identity rate limit taken.

Targets: ``presented / baseline < 5`` and ``secured / presented <= 1.3``.

Run: ``python -m benchmarks.call [--json] [--calls N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pydantic_core
from pydantic import BaseModel, Field

from mcpfusion import Fusion, Identity, Presenter, suggest, ui
from mcpfusion.auth import APIKeyVerifier, hash_api_key
from mcpfusion.middleware import AUDIT_LOGGER, audit_log, rate_limit
from mcpfusion.testing import FusionTester

TARGET = 5.0
SECURED_TARGET = 1.3
API_KEY = "bk_bench_0123456789abcdef0123456789abcdef"

ROW = {
    "id": "INV-00042",
    "customer_name": "Acme Corp",
    "amount_cents": 129_900,
    "currency": "EUR",
    "status": "overdue",
    "issued_at": "2024-05-01",
    "due_at": "2024-05-31",
    "internal_notes": "never shown to the agent",
}


class Invoice(BaseModel):
    """An invoice as the agent sees it."""

    id: str
    customer_name: str
    amount_cents: int = Field(description="Total, in cents.")
    currency: str
    status: str
    issued_at: str
    due_at: str


async def get_invoice(invoice_id: str) -> dict[str, Any]:
    """The handler both the app and the baseline call."""
    return ROW if invoice_id == ROW["id"] else {}


def build_app(secured: bool = False) -> Fusion:
    """One grouped tool with a trivial action and a presented one.

    ``secured``: the actions need a scope, and audit and rate-limit middleware run.
    """
    view = Presenter("Invoice", Invoice, rules=["amount_cents is in CENTS. Divide by 100."])

    @view.ui
    def _summary(invoice: dict[str, Any]) -> ui.UIBlock:
        return ui.summary(f"Invoice {invoice['id']} is {invoice['status']}.")

    @view.suggest
    def _next(invoice: dict[str, Any]) -> Any:
        return suggest("billing.remind", "Send a payment reminder")

    app = Fusion("bench")
    tool = app.tool(
        "billing", description="Invoices.", requires={"billing:read"} if secured else ()
    )
    if secured:
        app.middleware(audit_log())
        app.middleware(rate_limit(1e9, 1_000_000))  # never refuses: its cost, not its effect

    async def ping() -> str:
        return "pong"

    def ping_sync() -> str:
        return "pong"

    tool.action("ping")(ping)
    tool.action("ping_sync")(ping_sync)
    tool.action("get_invoice", returns=view, read_only=True)(get_invoice)
    tool.action("remind", idempotent=True)(ping)  # the suggestion names an action that exists
    return app


async def _sample(call: Callable[[], Awaitable[Any]], calls: int) -> list[float]:
    """Times ``calls`` calls one by one, in microseconds."""
    times = []
    clock = time.perf_counter_ns
    for _ in range(calls):
        start = clock()
        await call()
        times.append((clock() - start) / 1000)
    return times


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(calls: int, rounds: int) -> dict[str, Any]:
    """Runs every case ``rounds`` times, interleaved, and summarizes the samples."""
    tester = FusionTester(build_app())

    async def baseline() -> bytes:
        return pydantic_core.to_json(await get_invoice(invoice_id="INV-00042"))

    view = tester.app.tools["billing"].actions["get_invoice"].presenter
    assert view is not None
    audit = logging.getLogger(AUDIT_LOGGER)
    audit.setLevel(logging.INFO)
    audit.addHandler(logging.NullHandler())
    audit.propagate = False
    keys = APIKeyVerifier(
        {hash_api_key(API_KEY): Identity("bench", scopes={"billing:read"}, tenant="t1")}
    )
    guarded = FusionTester(build_app(secured=True))

    async def secured() -> Any:
        guarded.identity = await keys.verify(API_KEY)
        return await guarded.call("billing", "get_invoice", invoice_id="INV-00042")

    async def presenter_direct() -> Any:
        return view.present(await get_invoice(invoice_id="INV-00042"))

    cases: dict[str, Callable[[], Awaitable[Any]]] = {
        "trivial": lambda: tester.call("billing", "ping"),
        "trivial_sync": lambda: tester.call("billing", "ping_sync"),
        "presented": lambda: tester.call("billing", "get_invoice", invoice_id="INV-00042"),
        "baseline": baseline,
        "presenter_direct": presenter_direct,
        "secured": secured,
    }
    check = await tester.call("billing", "get_invoice", invoice_id="INV-00042")
    assert len(check.blocks) == 4 and not check.is_error, check.text
    checked = await secured()
    assert checked.blocks == check.blocks, checked.text
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for call in cases.values():  # warm-up: imports, caches, the thread pool
        await _sample(call, max(calls // 10, 10))
    for _ in range(rounds):
        for name, call in cases.items():
            gc.collect()
            samples[name].extend(await _sample(call, calls))
    figures = {
        name: {
            "p50_us": round(statistics.median(times), 2),
            "p99_us": round(_percentile(times, 0.99), 2),
            "calls": len(times),
        }
        for name, times in samples.items()
    }
    base = figures["baseline"]["p50_us"]
    ratios = {
        "trivial/baseline": round(figures["trivial"]["p50_us"] / base, 2),
        "presented/baseline": round(figures["presented"]["p50_us"] / base, 2),
        "presenter_direct/baseline": round(figures["presenter_direct"]["p50_us"] / base, 2),
        "secured/presented": round(
            figures["secured"]["p50_us"] / figures["presented"]["p50_us"], 2
        ),
    }
    return {
        "figures": figures,
        "ratios_p50": ratios,
        "target": {
            "presented/baseline": f"< {TARGET}",
            "secured/presented": f"<= {SECURED_TARGET}",
        },
        "met": ratios["presented/baseline"] < TARGET
        and ratios["secured/presented"] <= SECURED_TARGET,
        "python": sys.version.split()[0],
    }


def main(argv: list[str] | None = None) -> int:
    """Prints the figures (``--json``: then one JSON line); returns 1 if the target fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--calls", type=int, default=2000, help="calls per case per round")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    args = parser.parse_args(argv)
    report = anyio.run(measure, args.calls, args.rounds)
    print(f"{'case':<18}{'p50 µs':>10}{'p99 µs':>10}")
    for name, figure in report["figures"].items():
        print(f"{name:<18}{figure['p50_us']:>10.2f}{figure['p99_us']:>10.2f}")
    for name, ratio in report["ratios_p50"].items():
        print(f"{name:<28}{ratio:>6.2f}x")
    print(f"targets presented/baseline < {TARGET}, secured/presented <= {SECURED_TARGET}: ", end="")
    print("met" if report["met"] else "NOT met")
    if args.json:  # the last line: one JSON object, like every benchmark
        print(json.dumps(report, sort_keys=True))
    return 0 if report["met"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
