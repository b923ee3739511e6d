"""The dev console without a browser: forms, reloading, the token guard and streamed calls."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcpfusion import Fusion
from mcpfusion._dev import main_dev
from mcpfusion._dev.forms import action_forms, form_arguments
from mcpfusion._dev.reload import LiveApp
from mcpfusion._dev.server import TOKEN_HEADER, console_app, full_definitions
from mcpfusion.cli import UsageError, build_parser
from mcpfusion.terminal import TokenCounter, classify, definition_json
from tests.browser.sample_app import app as sample

GOLDEN = Path(__file__).parents[2] / "conformance" / "golden"
SAMPLE = Path(__file__).parents[2] / "browser" / "sample_app.py"
TOKEN = "t0ken"

APP_SOURCE = """
from mcpfusion import Fusion

app = Fusion("live", version="1")
tool = app.tool("{name}", description="A tool.")


@tool.action("ping", read_only=True)
def ping() -> str:
    return "pong"
"""


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    """One token counter for the module (loading the encoding is slow)."""
    return TokenCounter()


def golden_tool() -> dict[str, Any]:
    """The grouped billing tool of the conformance suite, as tools/list shows it."""
    tool: dict[str, Any] = json.loads((GOLDEN / "tools_list_billing.json").read_text())
    return tool


def test_forms_follow_the_action_enum() -> None:
    """A grouped tool has one form per action, in the enum's order."""
    forms = action_forms(golden_tool())
    assert [f.action for f in forms] == [
        "get_invoice",
        "list_invoices",
        "create_invoice",
        "void_invoice",
        "remind",
    ]
    assert forms[0].description == "Fetch one invoice. Requires: invoice_id."


def test_forms_keep_the_parameters_each_action_uses() -> None:
    """Each form holds the parameters its action uses, required where that action needs them."""
    forms = {f.action: f for f in action_forms(golden_tool())}
    fields = {a: {x.name: x for x in f.fields} for a, f in forms.items()}
    assert list(fields["list_invoices"]) == ["status", "limit", "_select"]
    assert list(fields["void_invoice"]) == ["invoice_id", "reason", "_select"]
    assert fields["void_invoice"]["reason"].required
    assert not fields["list_invoices"]["limit"].required


def test_a_lean_app_gets_the_forms_of_its_full_definitions() -> None:
    """Lean definitions cannot say which actions use a parameter: the forms read the full."""
    app = Fusion("lean", definitions="lean")
    tool = app.tool("invoices", description="Invoices.")
    tool.action("find", read_only=True)(lambda status=None: [])
    tool.action("get", read_only=True)(lambda invoice_id: {})
    [lean] = app.list_tools()
    # Lean: invoice_id is required wherever it is used, so only the description says where
    # ("get: ... Requires: invoice_id."), and read alone it would land in every form.
    assert lean["inputSchema"]["properties"]["invoice_id"] == {}
    assert "invoice_id" in [x.name for x in action_forms(lean)[0].fields]
    forms = {f.action: f for f in action_forms(full_definitions(app)["invoices"])}
    assert [x.name for x in forms["find"].fields] == ["status"]
    assert [(x.name, x.required) for x in forms["get"].fields] == [("invoice_id", True)]


def test_form_fields_pick_an_input_per_schema() -> None:
    """Enums (also nullable or by $ref) are selects, _select is checkboxes, numbers keep bounds."""
    fields = {f.name: f for form in action_forms(golden_tool()) for f in form.fields}
    assert (fields["status"].kind, fields["status"].options) == (
        "select",
        ("draft", "sent", "paid", "void"),
    )
    assert (fields["channel"].kind, fields["channel"].default) == ("select", '"email"')
    assert fields["_select"].kind == "checkboxes"
    assert fields["_select"].options == ("amount_cents", "customer", "id", "status")
    assert (fields["limit"].kind, fields["limit"].minimum, fields["limit"].maximum) == (
        "integer",
        1,
        100,
    )
    assert fields["lines"].kind == "json"
    assert fields["invoice_id"].kind == "text"


def test_a_flat_tool_has_one_form_without_action() -> None:
    """A tool without an action enum gets a single form with all its parameters."""
    tool = json.loads((GOLDEN / "tools_list_crm_find_customer.json").read_text())
    [form] = action_forms(tool)
    assert form.action is None
    required = {f.name for f in form.fields if f.required}
    assert required == set(tool["inputSchema"].get("required", []))


def test_form_arguments_read_values_as_the_cli_does() -> None:
    """Blank values are dropped, numbers parse, checkboxes become a list, strings stay strings."""
    arguments = form_arguments(
        golden_tool(),
        "list_invoices",
        {"status": "paid", "limit": "5", "_select": ["id", "status"], "invoice_id": " "},
    )
    assert arguments == {
        "action": "list_invoices",
        "status": "paid",
        "limit": 5,
        "_select": ["id", "status"],
    }


def write_app(path: Path, name: str, *, bump: float = 0) -> None:
    """Writes a one-tool app named ``name``; ``bump`` moves its mtime forward."""
    path.write_text(APP_SOURCE.format(name=name))
    if bump:
        stat = path.stat()
        os.utime(path, (stat.st_atime + bump, stat.st_mtime + bump))


def test_live_app_reloads_when_its_file_changes(tmp_path: Path) -> None:
    """Editing the app's file makes the next poll load the new app."""
    source = tmp_path / "live_app_a.py"
    write_app(source, "first")
    live = LiveApp(f"{source}:app")
    assert source.resolve() in live.files
    assert not live.poll()
    write_app(source, "second", bump=5)
    assert live.poll()
    assert [t["name"] for t in live.app.list_tools()] == ["second"]
    assert (live.version, live.error) == (2, None)


def test_live_app_keeps_the_last_good_app_while_the_file_is_broken(tmp_path: Path) -> None:
    """A failed reload reports the error and keeps serving; fixing the file reloads again."""
    source = tmp_path / "live_app_b.py"
    write_app(source, "first")
    live = LiveApp(f"{source}:app")
    source.write_text("def broken(:\n")
    os.utime(source, (source.stat().st_atime, source.stat().st_mtime + 5))
    assert live.poll()
    assert live.error is not None and "SyntaxError" in live.error
    assert [t["name"] for t in live.app.list_tools()] == ["first"]
    write_app(source, "fixed", bump=10)
    assert live.poll()
    assert live.error is None
    assert [t["name"] for t in live.app.list_tools()] == ["fixed"]


def test_live_app_needs_a_loadable_target() -> None:
    """The console does not start on a target that does not load."""
    with pytest.raises(UsageError, match="no module named 'no_such_module_here'"):
        LiveApp("no_such_module_here:app")


def client(counter: TokenCounter, live: LiveApp | None = None) -> httpx2.AsyncClient:
    """A client of the console over ASGI, as if from 127.0.0.1."""
    app = console_app(live or LiveApp(f"{SAMPLE}:app"), TOKEN, counter=counter)
    return httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1:8765"
    )


@pytest.mark.anyio
async def test_requests_without_the_token_are_refused(counter: TokenCounter) -> None:
    """Every route answers 403 without the token or with a wrong one."""
    async with client(counter) as http:
        for path in ("/", "/renderer", "/api/tools", "/api/status"):
            assert (await http.get(path)).status_code == 403
            assert (await http.get(path, params={"token": "wrong"})).status_code == 403
        assert (await http.post("/api/call", json={})).status_code == 403


@pytest.mark.anyio
async def test_requests_for_another_host_are_refused(counter: TokenCounter) -> None:
    """A Host header that is not loopback is refused even with the token (DNS rebinding)."""
    async with client(counter) as http:
        response = await http.get(
            "/api/status", params={"token": TOKEN}, headers={"Host": "evil.example:8765"}
        )
        assert response.status_code == 403


@pytest.mark.anyio
async def test_page_and_renderer_are_served_with_the_token(counter: TokenCounter) -> None:
    """The console page runs only its own script; the renderer may only be framed here."""
    async with client(counter) as http:
        page = await http.get("/", params={"token": TOKEN})
        renderer = await http.get("/renderer", params={"token": TOKEN})
    assert page.status_code == renderer.status_code == 200
    assert "script-src 'sha256-" in page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert renderer.headers["content-security-policy"] == "frame-ancestors 'self'"
    assert "window.mcpfusion" in renderer.text or "global.mcpfusion" in renderer.text


@pytest.mark.anyio
async def test_tool_listing_counts_tokens_as_the_cli_does(counter: TokenCounter) -> None:
    """Each tool's cost is the o200k count of its compact definition, as in inspect."""
    async with client(counter) as http:
        listing = (await http.get("/api/tools", headers={TOKEN_HEADER: TOKEN})).json()
    [tool] = listing["tools"]
    [definition] = sample.list_tools()
    assert tool["tokens"] == counter.count(definition_json(definition))
    assert listing["total_tokens"] == tool["tokens"]
    assert [f["action"] for f in tool["forms"]] == ["list_orders", "cancel_order"]


def events(body: str) -> list[tuple[str, Any]]:
    """The server-sent events of a response body."""
    out = []
    for chunk in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.split("\n"))
        out.append((lines["event"], json.loads(lines["data"])))
    return out


@pytest.mark.anyio
async def test_a_call_streams_progress_then_the_labelled_blocks(counter: TokenCounter) -> None:
    """Progress reports arrive as events; the result carries each block's kind and tokens."""
    async with client(counter) as http:
        response = await http.post(
            "/api/call",
            headers={TOKEN_HEADER: TOKEN},
            json={"tool": "orders", "action": "list_orders", "values": {"status": ""}},
        )
    assert response.headers["content-type"].startswith("text/event-stream")
    received = events(response.text)
    assert [name for name, _ in received] == ["progress"] * 3 + ["result"]
    assert received[0][1] == {"done": 1, "total": 3, "message": "page 1"}
    result = received[-1][1]
    expected = await sample.call_tool("orders", {"action": "list_orders"})
    assert result["result"] == expected.to_mcp()
    assert [(b["kind"], b["label"], b["text"]) for b in result["blocks"]] == list(
        classify(expected)
    )
    assert [b["tokens"] for b in result["blocks"]] == [
        counter.count(text) for text in expected.blocks
    ]
    assert result["arguments"] == {"action": "list_orders"}


@pytest.mark.anyio
async def test_an_error_is_streamed_as_the_agent_receives_it(counter: TokenCounter) -> None:
    """A tool error is a result event holding the envelope, labelled as an error."""
    async with client(counter) as http:
        response = await http.post(
            "/api/call",
            headers={TOKEN_HEADER: TOKEN},
            json={"tool": "orders", "action": "cancel_order", "values": {"order_id": "ORD-9"}},
        )
    [(name, result)] = events(response.text)
    assert name == "result"
    assert result["result"]["isError"] is True
    assert result["blocks"][0]["label"] == "error code=NOT_FOUND severity=error"


@pytest.mark.anyio
async def test_a_call_to_an_unknown_tool_is_a_bad_request(counter: TokenCounter) -> None:
    """An unknown tool or a malformed body answers 400 with the reason."""
    async with client(counter) as http:
        unknown = await http.post(
            "/api/call", headers={TOKEN_HEADER: TOKEN}, json={"tool": "nope", "values": {}}
        )
        malformed = await http.post(
            "/api/call",
            headers={TOKEN_HEADER: TOKEN, "Content-Type": "application/json"},
            content=b"not json",
        )
    assert unknown.status_code == malformed.status_code == 400
    assert unknown.json() == {"error": "unknown tool 'nope'"}


@pytest.mark.anyio
async def test_a_call_from_another_origin_or_not_json_is_refused(counter: TokenCounter) -> None:
    """A POST with a foreign, malformed or repeated Origin is 403; one that is not JSON 415."""
    body = {"tool": "orders", "action": "list_orders", "values": {}}
    async with client(counter) as http:
        for origin in (
            "http://evil.example",
            "http://127.0.0.1:9999",
            "null",
            "https://127.0.0.1:8765",
        ):
            response = await http.post(
                "/api/call", params={"token": TOKEN}, headers={"Origin": origin}, json=body
            )
            assert response.status_code == 403, origin
            assert response.json() == {"error": "cross-origin request refused"}
        twice = [("Origin", "http://127.0.0.1:8765")] * 2
        repeated = await http.post("/api/call", params={"token": TOKEN}, headers=twice, json=body)
        plain = await http.post(
            "/api/call",
            params={"token": TOKEN},
            headers={"Content-Type": "text/plain"},
            content=json.dumps(body).encode(),
        )
        own = await http.post(
            "/api/call",
            params={"token": TOKEN},
            headers={"Origin": "http://127.0.0.1:8765"},
            json=body,
        )
    assert repeated.status_code == 403
    assert (plain.status_code, plain.json()) == (
        415,
        {"error": "Content-Type must be application/json"},
    )
    assert own.status_code == 200
    assert events(own.text)[-1][0] == "result"


@pytest.mark.anyio
async def test_status_reports_the_reload_version(counter: TokenCounter, tmp_path: Path) -> None:
    """The page learns of a reload from /api/status."""
    source = tmp_path / "live_app_c.py"
    write_app(source, "first")
    live = LiveApp(f"{source}:app")
    async with client(counter, live) as http:
        before = (await http.get("/api/status", headers={TOKEN_HEADER: TOKEN})).json()
        write_app(source, "second", bump=5)
        live.poll()
        after = (await http.get("/api/status", headers={TOKEN_HEADER: TOKEN})).json()
    assert before == {"version": 1, "error": None}
    assert after == {"version": 2, "error": None}


def test_dev_command_plugs_into_the_cli_parser() -> None:
    """The mcpfusion parser has `dev TARGET` with its options (added by add_dev_command)."""
    parser = build_parser()
    args = parser.parse_args(["dev", "examples.billing:app", "--port", "0", "--poll", "0.5"])
    assert (args.target, args.port, args.poll, args.open) == ("examples.billing:app", 0, 0.5, False)


def test_main_dev_reports_a_bad_target_as_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A target that does not load exits with status 2 and one line on stderr."""
    assert main_dev(["no_such_module_here:app", "--port", "0"]) == 2
    assert "no module named 'no_such_module_here'" in capsys.readouterr().err
