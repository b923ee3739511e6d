"""Resources, prompts and completions pass through the middleware over HTTP: a caller
limited to 3 calls cannot read on as a resource, and every request leaves an audit line."""

from __future__ import annotations

import logging

import anyio
import pytest
from mcp import Client, MCPError, types

from mcpfusion import Fusion
from mcpfusion.middleware import audit_log, rate_limit
from mcpfusion.server import asgi_app
from tests.e2e.servers import uvicorn_in_process

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _billing() -> Fusion:
    """The same invoice as a tool action, a resource, a prompt and a completion."""
    app = Fusion("billing")
    app.middleware(audit_log())
    app.middleware(rate_limit(rate=0.001, burst=3))

    @app.tool("billing").action(read_only=True)
    def get_invoice(invoice_id: str) -> str:
        """One invoice."""
        return f"invoice {invoice_id}"

    @app.resource("billing://invoices/{invoice_id}")
    def invoice(invoice_id: str) -> str:
        """One invoice, by URI."""
        return f"invoice {invoice_id}"

    @invoice.complete("invoice_id")
    def invoice_ids(value: str) -> list[str]:
        return [i for i in ("INV-1", "INV-2") if i.startswith(value)]

    @app.prompt()
    def chase(invoice_id: str) -> str:
        """Chase an invoice."""
        return f"Chase invoice {invoice_id}."

    return app


@pytest.mark.parametrize("stateless", [False, True])
async def test_rate_limit_and_audit_cover_resources_prompts_and_completions(
    stateless: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """After 3 tool calls the limit refuses resource reads, prompts and completions too
    (a JSON-RPC error saying so), and the audit log has a line for each request."""
    ref = types.ResourceTemplateReference(
        type="ref/resource", uri="billing://invoices/{invoice_id}"
    )
    refused: list[str] = []
    with caplog.at_level(logging.INFO, logger="mcpfusion.audit"), anyio.fail_after(30):
        async with (
            uvicorn_in_process(asgi_app(_billing(), stateless=stateless)) as port,
            Client(f"http://127.0.0.1:{port}/mcp", mode="legacy") as client,
        ):
            for number in range(3):
                result = await client.call_tool(
                    "billing", {"action": "get_invoice", "invoice_id": f"INV-{number}"}
                )
                assert not result.is_error
            for _ in range(10):
                with pytest.raises(MCPError, match=r"^Too many calls") as read:
                    await client.read_resource("billing://invoices/INV-1")
                refused.append(str(read.value))
            with pytest.raises(MCPError, match=r"^Too many calls") as prompt:
                await client.get_prompt("chase", {"invoice_id": "INV-1"})
            with pytest.raises(MCPError, match=r"^Too many calls") as completion:
                await client.complete(ref, {"name": "invoice_id", "value": "INV"})
            over = await client.call_tool("billing", {"action": "get_invoice", "invoice_id": "1"})
    refused += [str(prompt.value), str(completion.value)]
    assert all(text.startswith("Too many calls in a short time.") for text in refused)
    assert over.is_error
    records = [r.audit for r in caplog.records]  # type: ignore[attr-defined]
    kinds = [(r["kind"], r["outcome"], r["code"]) for r in records]
    assert kinds == (
        [("tools/call", "ok", None)] * 3
        + [("resources/read", "error", "RATE_LIMITED")] * 10
        + [
            ("prompts/get", "error", "RATE_LIMITED"),
            ("completion/complete", "error", "RATE_LIMITED"),
        ]
        + [("tools/call", "error", "RATE_LIMITED")]
    )
