"""The sample app through the official MCP client over stdio and streamable HTTP."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpfusion.wire import parse
from tests.client_results import first_text, texts
from tests.e2e.conftest import Connect

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

PRESENTED: list[tuple[str, dict[str, Any] | None]] = [
    ("billing", {"action": "get", "invoice_id": "INV-1"}),
    ("billing", {"action": "get", "invoice_id": "INV-5"}),
    ("billing", {"action": "list"}),
    ("billing", {"action": "list", "status": "paid"}),
    ("billing", {"action": "export", "rows": 2}),
    ("billing", {"action": "note", "text": "ünïcode <llm_directives> text"}),
    ("ops_ping", None),
]
STRUCTURED: list[tuple[str, dict[str, Any]]] = [
    ("reports", {"action": "totals", "currency": "USD"}),
    ("reports", {"action": "customers"}),
    ("ops_stats", {}),
]
ERRORS: list[tuple[str, dict[str, Any]]] = [
    ("billing", {"action": "get", "invoice_id": 3}),  # wrong type
    ("billing", {"action": "get"}),  # missing required field
    ("billing", {"action": "get", "invoice_id": "INV-1", "color": "red"}),  # unknown field
    ("billing", {"action": "get", "invoice_id": "INV-99"}),  # ToolError from the handler
    ("billing", {"action": "fail"}),  # an exception: INTERNAL_ERROR, no traceback
    ("billing", {"action": "refund"}),  # unknown action
    ("billing", {}),  # no action
    ("billing", {"action": "get", "invoice_id": "INV-1", "_select": ["secret"]}),
    ("nope", {}),  # unknown tool
]


async def expected(app: Any, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The in-process result, as the MCP dict."""
    response = await app.call_tool(name, arguments)
    result: dict[str, Any] = response.to_mcp()
    return result


def wire_form(result: Any) -> dict[str, Any]:
    """A client-side result in the shape of ``ToolResponse.to_mcp()``."""
    form: dict[str, Any] = {
        "content": [item.model_dump(by_alias=True, exclude_none=True) for item in result.content],
        "isError": result.is_error,
    }
    if result.structured_content is not None:
        form["structuredContent"] = result.structured_content
    return form


async def test_server_identity(connect: Connect, app: Any) -> None:
    """The client sees the app's name, version and instructions."""
    with anyio.fail_after(30):
        async with connect() as client:
            assert client.server_info is not None
            assert (client.server_info.name, client.server_info.version) == ("sample", "1.2.3")
            assert client.instructions == app.instructions


async def test_list_tools_equals_app(connect: Connect, app: Any) -> None:
    """tools/list carries exactly the app's tool definitions."""
    with anyio.fail_after(30):
        async with connect() as client:
            listed = await client.list_tools()
    tools = [tool.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools]
    assert tools == app.list_tools()


async def test_presented_calls_match_in_process(connect: Connect, app: Any) -> None:
    """Every block of a presented result arrives byte for byte as the app built it."""
    with anyio.fail_after(60):
        async with connect() as client:
            for name, arguments in PRESENTED:
                result = await client.call_tool(name, arguments)
                assert wire_form(result) == await expected(app, name, arguments), (name, arguments)


async def test_presented_blocks_by_kind(connect: Connect) -> None:
    """A presented call carries data, UI, embed, directive, rule and suggestion blocks."""
    with anyio.fail_after(30):
        async with connect() as client:
            result = await client.call_tool("billing", {"action": "get", "invoice_id": "INV-1"})
    parsed = parse(result.content).view
    assert parsed.data["customer"] == "Acme <domain_rules>"  # neutralized on the wire only
    assert "tenant_id" not in parsed.data
    assert [b.type for b in parsed.ui_blocks] == ["echarts", "markdown"]
    assert parsed.ui_blocks[0].title == "Invoice INV-1"
    assert parsed.system_rules[-1] == "quantity is in units."
    assert [(s.tool, s.reason) for s in parsed.suggestions] == [
        ("billing", "Send a reminder for INV-1.")
    ]
    assert parsed.directives == ("Show amounts as currency, never raw cents.",)


async def test_select_trims_only_the_data_block(connect: Connect, app: Any) -> None:
    """``_select`` keeps the asked keys in the data block; the other blocks stay whole."""
    arguments = {"action": "get", "invoice_id": "INV-4", "_select": ["status", "id"]}
    with anyio.fail_after(30):
        async with connect() as client:
            result = await client.call_tool("billing", arguments)
            whole = await client.call_tool("billing", {"action": "get", "invoice_id": "INV-4"})
    assert wire_form(result) == await expected(app, "billing", arguments)
    assert parse(result.content).view.data == {"id": "INV-4", "status": "overdue"}
    assert texts(result.content[1:]) == texts(whole.content[1:])


async def test_errors_are_results_the_model_reads(connect: Connect, app: Any) -> None:
    """Validation, handler, unknown-tool and internal errors are isError results."""
    with anyio.fail_after(60):
        async with connect() as client:
            for name, arguments in ERRORS:
                result = await client.call_tool(name, arguments)
                assert result.is_error, (name, arguments)
                assert wire_form(result) == await expected(app, name, arguments), (name, arguments)
    text = wire_form(result)["content"][0]["text"]
    assert "UNKNOWN_TOOL" in text


async def test_internal_error_carries_no_traceback(connect: Connect) -> None:
    """A handler exception reaches the client as INTERNAL_ERROR without its details."""
    with anyio.fail_after(30):
        async with connect() as client:
            result = await client.call_tool("billing", {"action": "fail"})
    error = parse(result.content).error
    assert result.is_error and error is not None and error.code == "INTERNAL_ERROR"
    assert "/srv/secret" not in first_text(result)
    assert "Traceback" not in first_text(result)


async def test_structured_output_passes_client_validation(connect: Connect, app: Any) -> None:
    """Structured results satisfy the advertised outputSchema as the client checks it."""
    with anyio.fail_after(30):
        async with connect() as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            for name, arguments in STRUCTURED:
                assert listed[name].output_schema is not None
                # The client validates structured_content against output_schema here.
                result = await client.call_tool(name, arguments)
                assert not result.is_error
                if name != "ops_stats":  # the server process's counters differ from ours
                    assert wire_form(result) == await expected(app, name, arguments)
    assert result.structured_content is not None
    assert set(result.structured_content) == {"started", "cancelled", "finished"}


async def test_progress_notifications_arrive_in_order(connect: Connect) -> None:
    """Progress reported by a handler reaches the client's callback in order."""
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(30):
        async with connect() as client:
            result = await client.call_tool(
                "billing", {"action": "export", "rows": 5}, progress_callback=on_progress
            )
    assert first_text(result) == "exported 5 rows"
    assert seen == [(n, 5, f"row {n}/5") for n in range(1, 6)]


@pytest.mark.parametrize("mode", ["legacy"])
async def test_handshake_era_client(connect: Connect, app: Any, mode: str) -> None:
    """A client on the initialize-handshake protocol era gets the same tools and blocks."""
    arguments = {"action": "get", "invoice_id": "INV-2"}
    with anyio.fail_after(30):
        async with connect(mode=mode) as client:
            assert client.protocol_version != "2026-07-28"
            listed = await client.list_tools()
            result = await client.call_tool("billing", arguments)
    assert [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools] == (
        app.list_tools()
    )
    assert wire_form(result) == await expected(app, "billing", arguments)
