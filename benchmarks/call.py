"""Per-call latency of the in-process call path, against what no implementation can skip.

The calls go through ``Fusion.call_tool``, the in-process call path every transport ends
in (routing, validation, context, handler, wrapping, the response and its view):

* ``trivial``: an async action returning a short string;
* ``trivial_sync``: the same as a sync handler, which runs in a worker thread (the
  default path: nothing opted into);
* ``presented``: a ``get_invoice``-like async action whose one row goes through a
  Presenter with a rule, a UI block and a suggestion;
* ``secured``: the ``presented`` call on an app serving real users: its API key verified
  (hashed and compared), the action's scope checked, an audit record made (the
  ``mcpfusion.audit`` logger on, its handler writing nowhere: the framework's cost, not the
  disk's) and a per-identity rate limit taken;
* ``tester``: the ``presented`` call through ``FusionTester`` (what tests pay on top);
* ``baseline``: the handler awaited and its row serialized with ``pydantic_core.to_json``.

(u) is the sum of the parts of one presented call no implementation can skip, each timed
in the same run: validating the arguments (a pydantic model of the action's parameters),
masking the row (validating it into a typed dict of the declared fields), its indented
JSON, and the callbacks' own bodies (the UI block and the suggestion they return).

Targets (issue 25, which supersedes issue 12's: a hand-inlined minimal presented call
already costs 2.35-2.5 x (u)): ``presented <= 3.0 x (u)``, ``secured <= 1.5 x presented``,
``trivial <= 4 x baseline`` and ``trivial_sync <= 15 x trivial`` (p50s).

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
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from typing_extensions import TypedDict

from mcpfusion import Fusion, Identity, Presenter, suggest, ui
from mcpfusion.auth import APIKeyVerifier, hash_api_key
from mcpfusion.middleware import AUDIT_LOGGER, audit_log, rate_limit
from mcpfusion.testing import FusionTester

PRESENTED_TARGET = 3.0
TRIVIAL_TARGET = 4.0
SECURED_TARGET = 1.5
SYNC_TARGET = 15.0
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


class InvoiceRow(TypedDict):
    """The declared fields as a typed dict: the cheapest mask pydantic offers."""

    id: str
    customer_name: str
    amount_cents: int
    currency: str
    status: str
    issued_at: str
    due_at: str


class InvoiceArgs(BaseModel):
    """``get_invoice``'s parameters, validated as the action validates them."""

    model_config = ConfigDict(extra="forbid")
    invoice_id: str


class Invoice(BaseModel):
    """An invoice as the agent sees it."""

    id: str
    customer_name: str
    amount_cents: int = Field(description="Total, in cents.")
    currency: str
    status: str
    issued_at: str
    due_at: str


def summary_block(invoice: dict[str, Any]) -> ui.UIBlock:
    """The Presenter's UI callback."""
    return ui.summary(f"Invoice {invoice['id']} is {invoice['status']}.")


def next_step(invoice: dict[str, Any]) -> Any:
    """The Presenter's suggestion callback."""
    return suggest("billing.remind", "Send a payment reminder")


async def get_invoice(invoice_id: str) -> dict[str, Any]:
    """The handler both the app and the baseline call."""
    return ROW if invoice_id == ROW["id"] else {}


def build_app(secured: bool = False) -> Fusion:
    """One grouped tool with a trivial action and a presented one.

    ``secured``: the actions need a scope, and audit and rate-limit middleware run.
    """
    view = Presenter("Invoice", Invoice, rules=["amount_cents is in CENTS. Divide by 100."])
    view.ui(summary_block)
    view.suggest(next_step)

    app = Fusion("bench", data_format="json", ui_audience="all")  # vs pydantic's JSON below
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
    app = build_app()
    tester = FusionTester(app)
    ping = {"action": "ping"}
    ping_sync = {"action": "ping_sync"}
    get = {"action": "get_invoice", "invoice_id": "INV-00042"}
    audit = logging.getLogger(AUDIT_LOGGER)
    audit.setLevel(logging.INFO)
    audit.addHandler(logging.NullHandler())
    audit.propagate = False
    keys = APIKeyVerifier(
        {hash_api_key(API_KEY): Identity("bench", scopes={"billing:read"}, tenant="t1")}
    )
    guarded = build_app(secured=True)

    async def secured() -> Any:
        identity = await keys.verify(API_KEY)
        return await guarded.call_tool("billing", dict(get), identity=identity)

    async def baseline() -> bytes:
        return pydantic_core.to_json(await get_invoice(invoice_id="INV-00042"))

    args_validator = InvoiceArgs.__pydantic_validator__
    mask = TypeAdapter(InvoiceRow)
    masked: dict[str, Any] = dict(mask.validate_python(ROW))

    async def part_args() -> Any:
        return args_validator.validate_python({"invoice_id": "INV-00042"})

    async def part_mask() -> Any:
        return mask.validate_python(ROW)

    async def part_json() -> bytes:
        return pydantic_core.to_json(masked, indent=2)

    async def part_callbacks() -> Any:
        return summary_block(masked), next_step(masked)

    cases: dict[str, Callable[[], Awaitable[Any]]] = {
        "trivial": lambda: app.call_tool("billing", dict(ping)),
        "trivial_sync": lambda: app.call_tool("billing", dict(ping_sync)),
        "presented": lambda: app.call_tool("billing", dict(get)),
        "secured": secured,
        "tester": lambda: tester.call("billing", "get_invoice", invoice_id="INV-00042"),
        "baseline": baseline,
        "u_args": part_args,
        "u_mask": part_mask,
        "u_json": part_json,
        "u_callbacks": part_callbacks,
    }
    check = await app.call_tool("billing", dict(get))
    assert len(check.blocks) == 4 and not check.is_error, check.text
    assert pydantic_core.to_json(masked, indent=2).decode() == check.blocks[0]
    checked = await secured()
    assert checked.blocks == check.blocks, checked.text
    samples: dict[str, list[float]] = {name: [] for name in cases}
    medians: dict[str, list[float]] = {name: [] for name in cases}
    for call in cases.values():  # warm-up: imports, caches, the thread pool
        await _sample(call, max(calls // 10, 10))
    for _ in range(rounds):
        for name, call in cases.items():
            gc.collect()
            times = await _sample(call, calls)
            samples[name].extend(times)
            medians[name].append(statistics.median(times))
    # p50 is the best round's median, as timeit takes the best repeat: on a shared machine
    # a neighbour's burst slows whole rounds (medians then vary by 2x from run to run),
    # never speeds one up. The median of every call is reported beside it.
    figures = {
        name: {
            "p50_us": round(min(medians[name]), 2),
            "all_calls_p50_us": round(statistics.median(times), 2),
            "p99_us": round(_percentile(times, 0.99), 2),
            "calls": len(times),
        }
        for name, times in samples.items()
    }
    p50 = {name: figure["p50_us"] for name, figure in figures.items()}
    u = round(sum(v for name, v in p50.items() if name.startswith("u_")), 2)
    ratios = {
        "presented/u": round(p50["presented"] / u, 2),
        "trivial/baseline": round(p50["trivial"] / p50["baseline"], 2),
        "secured/presented": round(p50["secured"] / p50["presented"], 2),
        "trivial_sync/trivial": round(p50["trivial_sync"] / p50["trivial"], 2),
    }
    limits = {
        "presented/u": PRESENTED_TARGET,
        "trivial/baseline": TRIVIAL_TARGET,
        "secured/presented": SECURED_TARGET,
        "trivial_sync/trivial": SYNC_TARGET,
    }
    return {
        "figures": figures,
        "u_us": u,
        "ratios_p50": ratios,
        "target": {name: f"<= {limit}" for name, limit in limits.items()},
        "passed": {name: ratios[name] <= limit for name, limit in limits.items()},
        "python": sys.version.split()[0],
    }


def main(argv: list[str] | None = None) -> int:
    """Prints the figures (``--json``: then one JSON line); returns 1 if the target fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--calls", type=int, default=1000, help="calls per case per round")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds")
    args = parser.parse_args(argv)
    report = anyio.run(measure, args.calls, args.rounds)
    print(f"{'case':<18}{'p50 µs':>10}{'p99 µs':>10}")
    for name, figure in report["figures"].items():
        print(f"{name:<18}{figure['p50_us']:>10.2f}{figure['p99_us']:>10.2f}")
    print(f"{'(u)':<18}{report['u_us']:>10.2f}")
    for name, ratio in report["ratios_p50"].items():
        verdict = "PASS" if report["passed"][name] else "FAIL"
        print(f"{verdict} {name:<24}{ratio:>6.2f}x (target {report['target'][name]})")
    if args.json:  # the last line: one JSON object, like every benchmark
        print(json.dumps(report, sort_keys=True))
    return 0 if all(report["passed"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
