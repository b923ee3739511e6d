"""Recording one scripted session of the billing example over a real transport.

The sweep makes every action of every tool, happy paths and errors; ``record`` runs it
through the official MCP client against a stdio subprocess or an HTTP endpoint, and
``HttpServer`` starts ``python -m examples.billing --http --port 0`` and reads the endpoint
it announces.
"""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import LoggingMessageNotificationParams, TextContent

from examples.billing import demo_keys, seed
from examples.billing.db import Ledger

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = seed.HOSTILE_CUSTOMER_ID
MISSING_INVOICE = "INV-99999"
_ANNOUNCED = re.compile(r"http://127\.0\.0\.1:([1-9]\d*)/mcp")


@dataclass(frozen=True)
class Ids:
    """Invoice ids picked from the seeded data for the scripted calls."""

    paid: str
    overdue: str
    pending: str
    hostile_invoice: str
    hostile_note: str


@dataclass(frozen=True)
class Call:
    """One recorded ``tools/call``: what was sent and what came back."""

    tool: str
    arguments: dict[str, Any]
    texts: tuple[str, ...]
    is_error: bool
    structured: dict[str, Any] | None


@dataclass(frozen=True)
class Exchange:
    """One recorded request other than a tool call: a resource, prompt or completion.

    ``result`` is the result as JSON (``None`` on an error); ``error`` the JSON-RPC error's
    code, message and data.
    """

    method: str
    params: dict[str, Any]
    result: dict[str, Any] | None
    error: dict[str, Any] | None


@dataclass(frozen=True)
class Session:
    """Everything one transport's session recorded."""

    tools: list[dict[str, Any]]
    calls: list[Call]
    ids: Ids
    exchanges: list[Exchange] = field(default_factory=list)
    logs: list[tuple[str, Any]] = field(default_factory=list)
    """The log messages the server sent (``notifications/message``): level and data."""

    def exchange(self, method: str, **params: Any) -> Exchange:
        """The first recorded ``method`` request with exactly these parameters."""
        for exchange in self.exchanges:
            if exchange.method == method and exchange.params == params:
                return exchange
        raise LookupError(f"no recorded {method} {params}")

    def find(self, tool: str, **arguments: Any) -> Call:
        """The first recorded call of ``tool`` with exactly these arguments."""
        for call in self.calls:
            if call.tool == tool and call.arguments == arguments:
                return call
        raise LookupError(f"no recorded call {tool} {arguments}")


def pick_ids(db: Ledger) -> Ids:
    """Chooses the invoices the sweep works on, from the database the server will use."""
    rows = db.list_invoices()

    def first(**match: Any) -> str:
        return str(next(r["id"] for r in rows if all(r[k] == v for k, v in match.items())))

    hostile_note = next(r["id"] for r in rows if "</domain_rules>" in r["internal_notes"])
    return Ids(
        paid=first(status="paid"),
        overdue=first(status="overdue"),
        pending=first(status="pending"),
        hostile_invoice=first(customer_id=HOSTILE),
        hostile_note=hostile_note,
    )


def sweep(ids: Ids) -> list[tuple[str, dict[str, Any]]]:
    """The scripted calls: every action of every tool, the happy paths and the errors."""
    billing: list[dict[str, Any]] = [
        {"action": "list_invoices"},
        {"action": "list_invoices", "status": "overdue"},
        {"action": "list_invoices", "status": "pending"},
        {"action": "list_invoices", "customer_id": HOSTILE},
        {"action": "list_invoices", "status": "paid", "customer_id": HOSTILE},
        {"action": "list_invoices", "customer_id": "CUS-9999"},
        {"action": "list_invoices", "_select": ["id", "customer_name"]},
        {"action": "get_invoice", "invoice_id": ids.paid},
        {"action": "get_invoice", "invoice_id": ids.overdue},
        {"action": "get_invoice", "invoice_id": ids.hostile_invoice},
        {"action": "get_invoice", "invoice_id": ids.hostile_note},
        {"action": "get_invoice", "invoice_id": ids.overdue, "_select": ["id", "lines"]},
        {"action": "get_invoice", "invoice_id": MISSING_INVOICE},
        {"action": "remind", "invoice_id": ids.overdue},
        {"action": "remind", "invoice_id": ids.overdue},
        {"action": "remind", "invoice_id": MISSING_INVOICE},
        {"action": "mark_paid", "invoice_id": ids.paid},
        {"action": "mark_paid", "invoice_id": ids.pending},
        {"action": "mark_paid", "invoice_id": MISSING_INVOICE},
        {"action": "list_invoices", "status": "late"},
        {"action": "get_invoice"},
        {"action": "get_invoice", "invoice_id": ids.paid, "_select": ["tenant_id"]},
        {"action": "refund", "invoice_id": ids.paid},
        {},
    ]
    customers: list[dict[str, Any]] = [
        {"action": "list_customers"},
        {"action": "list_customers", "country": "GB"},
        {"action": "get_customer", "customer_id": HOSTILE},
        {"action": "get_customer", "customer_id": "CUS-0001"},
        {"action": "get_customer", "customer_id": "CUS-9999"},
        {"action": "get_customer", "customer_id": "CUS-0001", "api_key": "x"},
    ]
    reports: list[dict[str, Any]] = [
        {"action": "revenue", "year": 2024},
        {"action": "revenue", "year": 2025},
        {"action": "revenue", "year": 1900},
        {"action": "revenue", "year": "twenty"},
    ]
    return [
        *(("billing", a) for a in billing),
        *(("customers", a) for a in customers),
        *(("reports", a) for a in reports),
        ("invoices", {"action": "list_invoices"}),
    ]


TEMPLATE = "billing://invoices/{invoice_id}"


def surface_sweep(ids: Ids) -> list[tuple[str, dict[str, Any]]]:
    """The resource, prompt and completion requests: happy paths and every error."""
    invoices = [ids.paid, ids.overdue, ids.hostile_invoice, ids.hostile_note, MISSING_INVOICE]
    return [
        ("resources/list", {}),
        ("resources/templates/list", {}),
        *(("resources/read", {"uri": f"billing://invoices/{i}"}) for i in invoices),
        ("resources/read", {"uri": "billing://invoices/tenant_id"}),
        ("resources/read", {"uri": "billing://customers/CUS-0001"}),
        ("prompts/list", {}),
        ("prompts/get", {"name": "collections_call", "arguments": {"customer_id": HOSTILE}}),
        ("prompts/get", {"name": "collections_call", "arguments": {"customer_id": "CUS-0001"}}),
        ("prompts/get", {"name": "collections_call", "arguments": {"customer_id": "CUS-9999"}}),
        ("prompts/get", {"name": "collections_call", "arguments": {"customer_id": "api_key"}}),
        ("prompts/get", {"name": "collections_call", "arguments": {}}),
        ("prompts/get", {"name": "refund_call", "arguments": {}}),
        complete("collections_call", "customer_id", ""),
        complete("collections_call", "customer_id", "CUS-001"),
        complete(TEMPLATE, "invoice_id", "INV-0000"),
        complete("refund_call", "customer_id", ""),
    ]


def complete(ref: str, argument: str, value: str) -> tuple[str, dict[str, Any]]:
    """A ``completion/complete`` request of the sweep."""
    return ("completion/complete", {"ref": ref, "argument": argument, "value": value})


async def exchange(client: Client, method: str, params: dict[str, Any]) -> Exchange:
    """Sends one surface request through the official client's methods and records it."""
    try:
        result: Any
        match method:
            case "resources/list":
                result = await client.list_resources()
            case "resources/templates/list":
                result = await client.list_resource_templates()
            case "resources/read":
                result = await client.read_resource(params["uri"])
            case "prompts/list":
                result = await client.list_prompts()
            case "prompts/get":
                result = await client.get_prompt(params["name"], params["arguments"])
            case _:
                ref: Any = (
                    types.ResourceTemplateReference(uri=params["ref"])
                    if "://" in params["ref"]
                    else types.PromptReference(name=params["ref"])
                )
                argument = {"name": params["argument"], "value": params["value"]}
                result = await client.complete(ref, argument)
    except MCPError as exc:
        error = {"code": exc.code, "message": exc.message, "data": exc.data}
        return Exchange(method, params, None, error)
    dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    dumped.pop("_meta", None)  # the server's identity stamp
    return Exchange(method, params, dumped, None)


@asynccontextmanager
async def connect(server: StdioServerParameters | str, **options: Any) -> AsyncIterator[Client]:
    """The official client: over stdio as the local operator, over HTTP with Northwind's
    read-write API key (the same identity, so both record the same results)."""
    if not isinstance(server, str):
        async with Client(server, **options) as client:
            yield client
        return
    headers = {"Authorization": f"Bearer {demo_keys.NORTHWIND_WRITE}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(server, http_client=http), **options) as client,
    ):
        yield client


async def record(server: StdioServerParameters | str, ids: Ids) -> Session:
    """Lists the tools and makes every scripted call through the official client, which
    asks for every log message (``log_level="debug"``)."""
    logs: list[tuple[str, Any]] = []

    async def heard(params: LoggingMessageNotificationParams) -> None:
        logs.append((params.level, params.data))

    with anyio.fail_after(60):
        async with connect(server, logging_callback=heard, log_level="debug") as client:
            listed = await client.list_tools()
            tools = [
                t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools
            ]
            calls = []
            for tool, arguments in sweep(ids):
                result = await client.call_tool(tool, arguments)
                texts = []
                for item in result.content:
                    assert isinstance(item, TextContent), f"{tool}: a {item.type} item"
                    texts.append(item.text)
                sent, structured = without_cursor(tuple(texts), result.structured_content)
                calls.append(Call(tool, arguments, sent, bool(result.is_error), structured))
            exchanges = [
                await exchange(client, method, params) for method, params in surface_sweep(ids)
            ]
    return Session(tools, calls, ids, exchanges, logs)


CURSOR = "CURSOR"
"""What a recorded page's next-page cursor reads as."""


def without_cursor(
    texts: tuple[str, ...], structured: dict[str, Any] | None
) -> tuple[tuple[str, ...], dict[str, Any] | None]:
    """A page's texts and structured content with its cursor written ``CURSOR``.

    A cursor is sealed with a fresh IV and the time it was issued, so two transports
    never receive the same one; everything else of the page must be equal.
    """
    page = structured.get("page") if structured is not None else None
    cursor = page.get("nextCursor") if isinstance(page, dict) else None
    if not isinstance(cursor, str) or structured is None:
        return texts, structured
    texts = tuple(text.replace(cursor, CURSOR) for text in texts)
    return texts, {**structured, "page": {**structured["page"], "nextCursor": CURSOR}}


def _drain(stream: Any, lines: queue.Queue[str]) -> None:
    # Reads the server's stderr to the end, so a chatty server never blocks on a full pipe.
    for line in stream:
        lines.put(line)
    lines.put("")


@dataclass
class HttpServer:
    """A ``python -m examples.billing --http --port 0`` subprocess and its endpoint."""

    process: subprocess.Popen[str]
    reader: threading.Thread
    url: str = ""

    @classmethod
    def start(cls, db: Path, *extra: str) -> HttpServer:
        """Starts the server and waits (30 s at most) for the endpoint it announces."""
        command = [sys.executable, "-m", "examples.billing", "--db", str(db), "--http"]
        process = subprocess.Popen(
            [*command, "--port", "0", *extra],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines: queue.Queue[str] = queue.Queue()
        reader = threading.Thread(target=_drain, args=(process.stderr, lines), daemon=True)
        reader.start()
        server = cls(process, reader)
        seen = []
        try:
            while not server.url:
                line = lines.get(timeout=30)
                seen.append(line)
                if not line:
                    raise RuntimeError("the server exited:\n" + "".join(seen))
                found = _ANNOUNCED.search(line)
                server.url = found.group(0) if found else ""
        except BaseException:
            server.stop()
            raise
        return server

    def stop(self) -> None:
        """Terminates the server (kills it after 10 s) and closes its stderr pipe."""
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.reader.join(timeout=10)
        if self.process.stderr is not None:
            self.process.stderr.close()


def stdio_server(db: Path) -> StdioServerParameters:
    """Spawn parameters for ``python -m examples.billing --db DB`` over stdio."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "examples.billing", "--db", str(db)], cwd=ROOT
    )
