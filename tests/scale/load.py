"""Driving the billing example with many official MCP clients, checking every answer.

Each client runs a fixed plan of calls (reads of customers and paid invoices, and
``mark_paid`` on invoices of its own), each one POST of the official client's bytes on
protocol 2026-07-28 (that client's own machinery costs more CPU than the server's answer,
which on a shared 2-core machine would measure the client; tests/scale/test_events.py
drives the official client).
Every answer is compared with the database as it was before the run. A call that fails
with a transport error is retried on a new client when it is read-only; a ``mark_paid``
is never sent twice (it is not idempotent).
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import toon_format

from examples.billing import demo_keys
from examples.billing.db import BillingDB
from examples.billing.seed import MAIN_TENANT
from mcpfusion.wire import neutralize

KEY = demo_keys.NORTHWIND_WRITE
CALL_TIMEOUT = 30.0
RECONNECT_EVERY = 100
"""Calls per connection (nginx's keepalive_requests): a new connection after as many."""


@dataclass(frozen=True)
class Call:
    """One planned call and what its answer must hold."""

    tool: str
    arguments: dict[str, Any]
    expected: dict[str, Any]
    read_only: bool


@dataclass
class Tally:
    """What a run came to."""

    ok: int = 0
    retried: int = 0
    failed: int = 0
    wrong: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    paid: list[str] = field(default_factory=list)
    unanswered_payments: list[str] = field(default_factory=list)
    in_flight: dict[int, float] = field(default_factory=dict)

    def waiting_longer_than(self, seconds: float) -> int:
        now = time.perf_counter()
        return sum(1 for started in list(self.in_flight.values()) if now - started > seconds)


@dataclass(frozen=True)
class Expected:
    """The database before the run, as the plans need it."""

    customers: list[dict[str, Any]]
    paid_invoices: list[dict[str, Any]]
    unpaid: list[str]


def snapshot(db_path: Path) -> Expected:
    """Reads what the plans call and check from the database (seeding it if new)."""
    ledger = BillingDB.open(db_path).tenant(MAIN_TENANT)
    invoices = ledger.list_invoices()
    return Expected(
        customers=[
            {k: row[k] for k in ("id", "name", "email", "country")}
            for row in ledger.list_customers()
        ],
        paid_invoices=[
            {k: row[k] for k in ("id", "amount_cents", "customer_id", "status")}
            for row in invoices
            if row["status"] == "paid"
        ],
        unpaid=[row["id"] for row in invoices if row["status"] != "paid"],
    )


def plans(
    expected: Expected, clients: int, calls: int, payments: int, seed: int = 16, first: int = 0
) -> list[list[Call]]:
    """Each client's calls: ``payments`` of them ``mark_paid`` on invoices of its own, taken
    from the unpaid invoices from index ``first`` on."""
    if first + clients * payments > len(expected.unpaid):
        raise ValueError("not enough unpaid invoices for the payments asked")
    rng = random.Random(seed)
    result = []
    for client in range(clients):
        plan: list[Call] = []
        for _ in range(calls - payments):
            if rng.random() < 0.5:
                customer = rng.choice(expected.customers)
                arguments = {"action": "get_customer", "customer_id": customer["id"]}
                plan.append(Call("customers", arguments, customer, True))
            else:
                invoice = rng.choice(expected.paid_invoices)
                arguments = {"action": "get_invoice", "invoice_id": invoice["id"]}
                plan.append(Call("billing", arguments, invoice, True))
        own = expected.unpaid[first + client * payments : first + (client + 1) * payments]
        for invoice_id in own:
            arguments = {"action": "mark_paid", "invoice_id": invoice_id}
            at = rng.randrange(len(plan) + 1)
            plan.insert(at, Call("billing", arguments, {"id": invoice_id, "status": "paid"}, False))
        result.append(plan)
    return result


PROTOCOL = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientInfo": {"name": "scale-load", "version": "0.1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class TransportError(Exception):
    """An answer that is no JSON-RPC response: a status other than 200, a cut body."""


def http_client(key: str = KEY) -> httpx2.AsyncClient:
    """An HTTP client sending what the official client sends on protocol 2026-07-28."""
    return httpx2.AsyncClient(
        headers={
            "Authorization": f"Bearer {key}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL,
            "Mcp-Method": "tools/call",
        },
        timeout=CALL_TIMEOUT,
    )


async def call_tool(
    http: httpx2.AsyncClient, url: str, request_id: int, tool: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    """One single-exchange ``tools/call`` (the official client's bytes); its result."""
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": META},
    }
    response = await http.post(url, json=body, headers={"Mcp-Name": tool})
    if response.status_code != 200:
        raise TransportError(f"HTTP {response.status_code}")
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:] for line in text.splitlines() if line.startswith("data:")]
        text = data[-1] if data else ""
    try:
        message = json.loads(text)
    except ValueError:
        raise TransportError("a cut or malformed body") from None
    if not isinstance(message, dict) or message.get("id") != request_id:
        raise TransportError(f"not the response to {request_id}: {text[:200]!r}")
    if "result" not in message:
        raise TransportError(f"JSON-RPC error {message.get('error')!r}")
    result: dict[str, Any] = message["result"]
    return result


def check(call: Call, result: dict[str, Any]) -> str | None:
    """What is wrong with an answer, or ``None``."""
    if result.get("isError"):
        return f"{call.arguments}: error {result['content'][0]['text'][:200]!r}"
    data = toon_format.decode(result["content"][0]["text"])  # the example's default format
    for key, value in call.expected.items():
        # TOON neutralizes reserved tags as text (SPEC §7): a hostile name arrives inert.
        value = neutralize(value) if isinstance(value, str) else value
        if data.get(key) != value:
            return f"{call.arguments}: {key} is {data.get(key)!r}, not {value!r}"
    return None


async def run_client(url: str, plan: list[Call], tally: Tally, ident: int) -> None:
    """Runs one plan to its end, retrying read-only calls after a transport error.

    A new connection every ``RECONNECT_EVERY`` calls, and after any transport error.
    """
    index = served = attempts = 0
    retrying = False
    http = http_client()
    try:
        while index < len(plan):
            call = plan[index]
            if served == RECONNECT_EVERY:
                await http.aclose()
                http, served = http_client(), 0
            started = time.perf_counter()
            tally.in_flight[ident] = started
            try:
                with anyio.fail_after(CALL_TIMEOUT):
                    result = await call_tool(http, url, index + 1, call.tool, call.arguments)
            except (httpx2.HTTPError, TransportError, TimeoutError):
                await http.aclose()
                http, served = http_client(), 0
                attempts += 1
                if call.read_only and attempts <= 3:
                    retrying = True
                    continue
                tally.failed += 1
                if not call.read_only:
                    tally.unanswered_payments.append(call.arguments["invoice_id"])
                retrying, attempts = False, 0
                index += 1
                continue
            finally:
                tally.in_flight.pop(ident, None)
            tally.latencies.append(time.perf_counter() - started)
            problem = check(call, result)
            if problem is not None:
                tally.wrong.append(problem)
            if not call.read_only and problem is None:
                tally.paid.append(call.arguments["invoice_id"])
            if retrying:
                tally.retried += 1
            else:
                tally.ok += 1
            retrying, attempts = False, 0
            index += 1
            served += 1
    finally:
        await http.aclose()


async def run(url: str, all_plans: list[list[Call]], tally: Tally) -> float:
    """Runs every plan at once; returns the seconds it took."""
    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for ident, plan in enumerate(all_plans):
            group.start_soon(run_client, url, plan, tally, ident)
    return time.perf_counter() - started


def paid_in(db_path: Path, invoice_ids: list[str]) -> set[str]:
    """The invoices of ``invoice_ids`` the database holds as paid."""
    ledger = BillingDB(db_path).tenant(MAIN_TENANT)
    paid = set()
    for invoice_id in invoice_ids:
        invoice = ledger.get_invoice(invoice_id)
        if invoice is not None and invoice["status"] == "paid":
            paid.add(invoice_id)
    return paid


def percentile(values: list[float], fraction: float) -> float:
    """The ``fraction`` percentile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]
