"""Per-call latency of an mcpfusion server against two SDK baselines, in the same run.

Every server is driven by the official client through an in-memory transport that
serializes each JSON-RPC message to JSON text and parses it back, as stdio does, so the
figures include the wire work a real client pays for. The call is a presented one-row
action (masking, rules, a UI block, suggestions). Baselines:

* ``bare``: a low-level SDK ``Server`` whose handler returns the same content, prebuilt;
  the target is ``mcpfusion / bare <= 1.25`` (the framework costs at most 25 % on top of
  the SDK's own path).
* ``mcpserver``: the SDK's high-level ``MCPServer`` serving a tool that returns the same
  row as a pydantic model; the target is ``mcpfusion / mcpserver < 1.0``.

Run: ``python -m benchmarks.server [--json] [--calls N]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import Client, types
from mcp.server import MCPServer, Server, ServerRequestContext
from mcp.shared.message import SessionMessage
from pydantic import BaseModel, Field

from mcpfusion import Fusion, Presenter, Suggestion, ui
from mcpfusion.server import build_server, to_call_tool_result

RATIO_BARE = 1.25
RATIO_MCPSERVER = 1.0

ROW = {
    "id": "INV-00042",
    "number": "2024-0042",
    "customer_id": "CUS-007",
    "customer_name": "Acme Corp",
    "amount_cents": 129_900,
    "currency": "EUR",
    "status": "overdue",
    "issued_at": "2024-05-01",
    "due_at": "2024-05-31",
    "tenant_id": "tenant-secret",
    "internal_notes": "never shown to the agent",
}
ARGUMENTS = {"action": "get", "invoice_id": "INV-00042"}


class Invoice(BaseModel):
    """An invoice as the agent sees it."""

    id: str
    number: str
    customer_id: str
    customer_name: str
    amount_cents: int = Field(description="Total, in cents.")
    currency: str
    status: str
    issued_at: str
    due_at: str


def fusion_app() -> Fusion:
    """The measured app: one grouped tool whose ``get`` action is presented."""
    view = Presenter(
        "Invoice",
        schema=Invoice,
        rules=["amount_cents is in cents: divide by 100 before showing it."],
    )

    @view.ui
    def _summary(invoice: dict[str, Any]) -> ui.UIBlock:
        return ui.summary(f"{invoice['number']}: {invoice['status']}")

    @view.suggest
    def _next(invoice: dict[str, Any]) -> Suggestion | None:
        if invoice["status"] == "overdue":
            return Suggestion("billing", "Send a reminder: the invoice is overdue.")
        return None

    app = Fusion("bench", version="1.0.0")
    billing = app.tool("billing", description="Invoices.")

    @billing.action("get", description="One invoice by id.", returns=view, read_only=True)
    async def get(invoice_id: str) -> dict[str, Any]:
        return dict(ROW, id=invoice_id)

    @billing.action("list", description="Recent invoices.", returns=view, read_only=True)
    async def list_(limit: int = 10) -> list[dict[str, Any]]:
        return [ROW] * limit

    return app


def bare_server(tools: list[dict[str, Any]], result: types.CallToolResult) -> Server[Any]:
    """A low-level server answering every call with ``result``, built once."""
    listed = types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tools])

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listed

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return result

    return Server("bare", version="1.0.0", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def mcpserver() -> MCPServer:
    """The SDK's high-level server with a tool returning the same row as a model."""
    server = MCPServer("mcpserver", version="1.0.0")

    @server.tool(description="Invoices.")
    async def billing(action: str, invoice_id: str) -> Invoice:
        return Invoice.model_validate(dict(ROW, id=invoice_id))

    return server


@asynccontextmanager
async def json_memory_transport(
    server: Server[Any],
) -> AsyncIterator[tuple[MemoryObjectReceiveStream[Any], MemoryObjectSendStream[Any]]]:
    """A client transport to ``server`` that serializes every message as stdio does."""

    def roundtrip(item: Any) -> Any:
        if not isinstance(item, SessionMessage):
            return item
        raw = item.message.model_dump_json(by_alias=True, exclude_unset=True)
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(raw, by_name=False))

    c_out_send, c_out_recv = anyio.create_memory_object_stream[Any](0)
    s_in_send, s_in_recv = anyio.create_memory_object_stream[Any](0)
    s_out_send, s_out_recv = anyio.create_memory_object_stream[Any](0)
    c_in_send, c_in_recv = anyio.create_memory_object_stream[Any](0)

    async def relay(
        source: MemoryObjectReceiveStream[Any], sink: MemoryObjectSendStream[Any]
    ) -> None:
        async with source, sink:
            async for item in source:
                try:
                    await sink.send(roundtrip(item))
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return

    done = anyio.Event()

    async def run_server() -> None:
        try:
            await server.run(s_in_recv, s_out_send, server.create_initialization_options())
        finally:
            done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(relay, c_out_recv, s_in_send)
        group.start_soon(relay, s_out_recv, c_in_send)
        group.start_soon(run_server)
        try:
            yield c_in_recv, c_out_send
        finally:
            await c_out_send.aclose()
            with anyio.move_on_after(2):
                await done.wait()
            group.cancel_scope.cancel()


async def measure(calls: int) -> dict[str, Any]:
    """Times ``calls`` calls per server, interleaved one by one; returns figures and verdicts.

    Interleaving call by call (in a rotating order) exposes the three servers to the same
    machine load, which matters on a shared box far more than any warm-up does.
    """
    app = fusion_app()
    prebuilt = to_call_tool_result(await app.call_tool("billing", dict(ARGUMENTS)))
    servers: dict[str, Any] = {
        "mcpfusion": build_server(app),
        "bare": bare_server(app.list_tools(), prebuilt),
        # MCPServer has no public accessor for the low-level server the transports run.
        "mcpserver": mcpserver()._lowlevel_server,
    }
    samples: dict[str, list[int]] = {name: [] for name in servers}
    async with (
        Client(json_memory_transport(servers["mcpfusion"])) as fusion_client,
        Client(json_memory_transport(servers["bare"])) as bare_client,
        Client(json_memory_transport(servers["mcpserver"])) as sdk_client,
    ):
        clients = [("mcpfusion", fusion_client), ("bare", bare_client), ("mcpserver", sdk_client)]
        for _, client in clients:  # warm-up, and the client's output-schema fetch
            for _ in range(100):
                result = await client.call_tool("billing", ARGUMENTS)
                assert not result.is_error, result
        gc.collect()
        for n in range(calls):
            turn = n % len(clients)
            for name, client in clients[turn:] + clients[:turn]:
                start = time.perf_counter_ns()
                await client.call_tool("billing", ARGUMENTS)
                samples[name].append(time.perf_counter_ns() - start)
    p50 = {name: statistics.median(values) / 1000 for name, values in samples.items()}
    ratio_bare = p50["mcpfusion"] / p50["bare"]
    ratio_sdk = p50["mcpfusion"] / p50["mcpserver"]
    return {
        "calls_per_server": calls,
        "p50_us": {name: round(value, 1) for name, value in p50.items()},
        "ratio_vs_bare": round(ratio_bare, 3),
        "ratio_vs_mcpserver": round(ratio_sdk, 3),
        "target_vs_bare": f"<= {RATIO_BARE}",
        "target_vs_mcpserver": f"< {RATIO_MCPSERVER}",
        "pass_vs_bare": ratio_bare <= RATIO_BARE,
        "pass_vs_mcpserver": ratio_sdk < RATIO_MCPSERVER,
    }


def main(argv: list[str] | None = None) -> int:
    """Prints the figures (``--json`` for a machine-readable line) and PASS/FAIL."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per server")
    args = parser.parse_args(argv)
    figures = anyio.run(measure, args.calls)
    passed = figures["pass_vs_bare"] and figures["pass_vs_mcpserver"]
    figures["result"] = "PASS" if passed else "FAIL"
    if args.json:
        print(json.dumps(figures))
    else:
        p50 = figures["p50_us"]
        print(f"p50 per call (µs), {args.calls} calls each, interleaved, JSON-RPC in memory")
        for name, value in p50.items():
            print(f"  {name:<10} {value:>8.1f}")
        print(f"  mcpfusion/bare      {figures['ratio_vs_bare']:.3f}  (target <= {RATIO_BARE})")
        print(
            f"  mcpfusion/mcpserver {figures['ratio_vs_mcpserver']:.3f}  "
            f"(target < {RATIO_MCPSERVER})"
        )
        print(figures["result"])
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
