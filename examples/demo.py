"""A scripted agent session against the billing example over stdio: what the agent receives.

Run it with ``make demo`` (or ``python -m examples.demo [--full]``). It starts
``python -m examples.billing`` on a fresh temporary database, talks to it with the official
MCP client, and prints every block of every result under a label naming its kind and its
o200k token count, the way ``mcpfusion call`` does (colour on a terminal, unless
``NO_COLOR`` is set). Then it serves the same database over HTTP and connects with a
read-only API key: the write actions are not in its tools/list, and calling one anyway is
refused.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import toon_format
from anyio.abc import ByteReceiveStream
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from examples.billing.demo_keys import NORTHWIND_READ
from examples.billing.seed import HOSTILE_CUSTOMER_ID, INVOICES
from mcpfusion.terminal import Style, TokenCounter, definition_json, render_result

ROOT = Path(__file__).resolve().parent.parent
ANNOUNCED = re.compile(rb"http://127\.0\.0\.1:[1-9][0-9]*/mcp")
PREVIEW_LINES = 16
TIME_LIMIT = 60


@dataclass(frozen=True, slots=True)
class Step:
    """One scripted call: why it is made, then the tool and its arguments."""

    title: str
    tool: str
    arguments: dict[str, Any]
    note: str = ""
    toon: bool = False
    """Whether the data block is TOON, to be compared with the same rows as JSON."""


STEPS = (
    Step(
        "A collection, cut to the Presenter's limit of 50",
        "billing",
        {"action": "list_invoices"},
        f"The database returns {INVOICES:,} rows with tenant ids and internal notes; the agent "
        "gets 50 masked rows, a truncation notice, a table, a chart, the rules and a next step.",
    ),
    Step(
        "One invoice, its lines embedded by their own Presenter",
        "billing",
        {"action": "get_invoice", "invoice_id": "INV-00002"},
        "The lines table comes from the line Presenter (on the wire an embed looks like any "
        "UI block); both Presenters' rules are merged into one <domain_rules> block.",
    ),
    Step(
        "_select: the agent asks for three fields",
        "billing",
        {
            "action": "get_invoice",
            "invoice_id": "INV-00002",
            "_select": ["id", "status", "amount_cents"],
        },
        "Only the data block shrinks; UI, rules and suggestions are computed on the full invoice.",
    ),
    Step(
        "TOON: customers in Great Britain",
        "customers",
        {"action": "list_customers", "country": "GB"},
        "One header, then one row per customer.",
        toon=True,
    ),
    Step(
        "Structured output: revenue per month",
        "reports",
        {"action": "revenue", "year": 2024},
        "The text block is the JSON of structuredContent, which the client validates against "
        "the outputSchema advertised in tools/list.",
    ),
    Step(
        "A validation error the agent can fix by itself",
        "billing",
        {"action": "list_invoices", "status": "late"},
        "What is wrong, what was sent, what to send instead.",
    ),
    Step(
        "A business error: the invoice is already paid",
        "billing",
        {"action": "mark_paid", "invoice_id": "INV-00001"},
        "The handler raised ToolError('CONFLICT', ...); the agent reads a <tool_error>.",
    ),
    Step(
        "The hostile customer: a name that tries to forge a <domain_rules> block",
        "customers",
        {"action": "get_customer", "customer_id": HOSTILE_CUSTOMER_ID},
        "In JSON the '<' of a reserved tag is written \\u003c (the decoded name is unchanged); "
        "in TOON, tables and bullets it is &lt;. Data can never open or close a block.",
    ),
)


@dataclass(slots=True)
class Totals:
    """What the session cost, summed over every call."""

    calls: int = 0
    blocks: int = 0
    tokens: int = 0
    errors: int = 0


def _show(
    step: Step,
    number: int,
    result: Any,
    counter: TokenCounter,
    style: Style,
    full: bool,
    totals: Totals,
) -> None:
    call = ", ".join(f"{k}={v!r}" for k, v in step.arguments.items())
    print()
    print(style.paint("tool", f"━━ {number}. {step.title}"))
    print(f"   {step.tool}({call})")
    if step.note:
        print(textwrap.fill(step.note, 96, initial_indent="   ", subsequent_indent="   "))
    # The CallToolResult as it came over the wire: what render_result reads from a client.
    wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    max_lines = None if full else PREVIEW_LINES
    print(render_result(wire, counter=counter, style=style, max_lines=max_lines))
    texts = [item.text for item in result.content]
    if step.toon and not result.is_error:
        as_json = counter.count(json.dumps(toon_format.decode(texts[0]), indent=2))
        print(f"   The same rows as indented JSON would be {as_json} tokens.")
    if result.structured_content is not None:
        keys = ", ".join(result.structured_content)
        print(f"   structuredContent {{{keys}}} is checked by the client against the outputSchema.")
    totals.calls += 1
    totals.blocks += len(texts)
    # Counted again for the session's total: a few milliseconds for the whole demo.
    totals.tokens += sum(counter.count(text) for text in texts)
    totals.errors += bool(result.is_error)


READ_ONLY = Step(
    "Over HTTP with a read-only API key: a write it cannot see, refused",
    "billing",
    {"action": "mark_paid", "invoice_id": "INV-00002"},
    "The key has billing:read only. Its tools/list offers no write action, so an agent never "
    "plans one; calling it anyway gets FORBIDDEN, naming the missing scope and nothing else.",
)


WORKFLOW = (
    Step(
        "A workflow: paying before reviewing, refused",
        "billing",
        {"action": "mark_paid", "invoice_id": "INV-00002"},
        "Served with --review-payments: mark_paid is allowed only once this caller reviewed "
        "an invoice. The refusal (OUT_OF_STATE) names the action that opens the way.",
    ),
    Step(
        "The review the refusal named",
        "billing",
        {"action": "review", "invoice_id": "INV-00002"},
        "It succeeds, so the caller's workflow state moves to 'reviewed' (kept per caller, "
        "not per session: in Redis across workers) and the server announces a tool list change.",
    ),
    Step(
        "Paying the reviewed invoice",
        "billing",
        {"action": "mark_paid", "invoice_id": "INV-00002"},
        "Now allowed; the payment moves the caller back to 'browsing'.",
    ),
)
"""The billing example's payment workflow, in a session of its own (``--review-payments``)."""


REVIEW = ("--review-payments",)


async def workflow_session(
    db: Path, first: int, *, full: bool, style: Style, totals: Totals
) -> None:
    """Serves ``db`` with the payment workflow over stdio and runs ``WORKFLOW``."""
    counter = TokenCounter()
    audit = db.with_name("audit.jsonl")
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "examples.billing", "--db", str(db), "--audit-log", str(audit), *REVIEW],
        cwd=ROOT,
    )
    async with Client(server) as client:
        for number, step in enumerate(WORKFLOW, start=first):
            result = await client.call_tool(step.tool, step.arguments)
            _show(step, number, result, counter, style, full, totals)


async def _announced(stderr: ByteReceiveStream) -> str:
    """The endpoint URL the server announces on stderr."""
    seen = b""
    async for chunk in stderr:
        seen += chunk
        found = ANNOUNCED.search(seen)
        if found:
            return found.group(0).decode()
    raise RuntimeError("the HTTP server exited before announcing its endpoint")


async def read_only_session(
    db: Path, number: int, *, full: bool, style: Style, totals: Totals
) -> None:
    """Serves ``db`` over HTTP and makes the refused write with a read-only key."""
    counter = TokenCounter()
    audit = db.with_name("audit.jsonl")
    command = [sys.executable, "-m", "examples.billing", "--db", str(db), "--http", "--port", "0"]
    command += ["--audit-log", str(audit)]
    async with await anyio.open_process(
        command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    ) as process:
        assert process.stderr is not None
        try:
            url = await _announced(process.stderr)
            headers = {"Authorization": f"Bearer {NORTHWIND_READ}"}
            async with (
                anyio.create_task_group() as group,
                httpx2.AsyncClient(headers=headers, timeout=30) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                group.start_soon(_drain, process.stderr)
                tools = (await client.list_tools()).tools
                billing = next(tool for tool in tools if tool.name == READ_ONLY.tool)
                actions = billing.input_schema["properties"]["action"]["enum"]
                result = await client.call_tool(READ_ONLY.tool, READ_ONLY.arguments)
                group.cancel_scope.cancel()
        finally:
            process.terminate()
    listed = f" This key's tools/list offers billing actions {', '.join(actions)}."
    step = dataclasses.replace(READ_ONLY, note=READ_ONLY.note + listed)
    _show(step, number, result, counter, style, full, totals)


async def _drain(stream: ByteReceiveStream) -> None:
    async for _ in stream:  # the server's log: read, so it never blocks on a full pipe
        pass


async def session(db: Path, *, full: bool, style: Style) -> Totals:
    """Runs the scripted calls against a server started on ``db``; returns the totals."""
    counter = TokenCounter()
    audit = db.with_name("audit.jsonl")
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "examples.billing", "--db", str(db), "--audit-log", str(audit)],
        cwd=ROOT,
    )
    totals = Totals()
    async with Client(server) as client:
        info = client.server_info
        server_name = f"{info.name} {info.version}" if info is not None else "server"
        tools = (await client.list_tools()).tools
        sizes = {
            t.name: counter.count(
                definition_json(t.model_dump(mode="json", by_alias=True, exclude_none=True))
            )
            for t in tools
        }
        print(style.paint("total", f"{server_name} over stdio"), end=" · ")
        print(f"protocol {client.protocol_version}")
        listed = ", ".join(f"{name} {n}" for name, n in sizes.items())
        print(f"tools/list: {listed} · {sum(sizes.values())} tokens in every prompt")
        if not full:
            print(f"(blocks are cut after {PREVIEW_LINES} lines here; --full shows every line)")
        for number, step in enumerate(STEPS, start=1):
            result = await client.call_tool(step.tool, step.arguments)
            _show(step, number, result, counter, style, full, totals)
    await read_only_session(db, len(STEPS) + 1, full=full, style=style, totals=totals)
    await workflow_session(db, len(STEPS) + 2, full=full, style=style, totals=totals)
    return totals


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the demo; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m examples.demo", description=__doc__)
    parser.add_argument("--full", action="store_true", help="print every line of every block")
    args = parser.parse_args(argv)
    style = Style.for_stream(sys.stdout, os.environ)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mcpfusion-demo-") as folder:

        async def bounded() -> Totals:
            with anyio.fail_after(TIME_LIMIT):
                return await session(Path(folder) / "billing.db", full=args.full, style=style)

        totals = anyio.run(bounded)
    elapsed = time.perf_counter() - started
    print()
    print(
        style.paint(
            "total",
            f"━━ {totals.calls} calls · {totals.blocks} blocks · {totals.tokens} tokens (o200k) "
            f"· {totals.errors} error results · {elapsed:.1f} s",
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
