"""Unit tests of mcpfusion.testing: FusionTester, CallResult and the pytest fixture."""

from __future__ import annotations

import functools
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from mcpfusion import Suggestion, ToolResponse, ui
from mcpfusion._app.app import Fusion
from mcpfusion._identity import Identity
from mcpfusion._present.presenter import Presenter, suggest
from mcpfusion._tools.context import Context, Request
from mcpfusion.testing import CallResult, FusionTester, ProgressEvent
from mcpfusion.ui import UIBlock


class Row(BaseModel):
    """A presented row."""

    id: int


class Child(BaseModel):
    """An embedded child."""

    sku: str


child_view = Presenter("Child", Child, rules=["Child rule."])


@child_view.collection_ui
def _child_table(rows: Any) -> UIBlock:
    return ui.table(["sku"], [[r["sku"]] for r in rows])


row_view = Presenter("Row", Row, rules=["Row rule."], directives=["Be brief."]).embed(
    "lines", child_view
)


@row_view.ui
def _row_ui(row: Any) -> UIBlock:
    return ui.summary(f"Row {row['id']}")


@row_view.suggest
def _row_next(row: Any) -> Suggestion:
    return suggest("rows.delete", "Remove it")


async def _report(ctx: Context) -> str:
    await ctx.progress(1, 2)
    await ctx.progress(2, 2, "done")
    return "reported"


def _tenant(ctx: Context) -> str:
    return str(getattr(ctx, "tenant", "none"))


app = Fusion("srv", data_format="json", ui_audience="all", definitions="full")
rows = app.tool("rows")
rows.action("get", returns=row_view)(lambda: {"id": 1, "lines": [{"sku": "A"}]})
rows.action("text")(lambda: "plain")
rows.action("report")(_report)
rows.action("tenant")(_tenant)
rows.action("delete")(lambda: None)
flat = app.tool("flat", exposition="flat")
flat.action("echo")(lambda value: value)


class FakeContext(Context):
    """A test double for the app's context."""

    tenant = "fake"


@pytest.mark.anyio
async def test_side_door_parts() -> None:
    """A presented result exposes every part exactly, embeds apart from UI blocks."""
    result = await FusionTester(app).call("rows", "get")
    assert result.data == {"id": 1, "lines": [{"sku": "A"}]}
    assert result.system_rules == ("Row rule.", "Child rule.")
    assert result.directives == ("Be brief.",)
    assert result.ui_blocks == (ui.summary("Row 1"),)
    assert result.embeds == (ui.table(["sku"], [["A"]]),)
    assert result.suggestions == (Suggestion("rows.delete", "Remove it"),)
    assert (result.is_error, result.error_code, result.structured_content) == (False, None, None)
    assert result.raw == result.response.to_mcp()
    assert result.text == "\n\n".join(result.blocks)


def test_parsed_parts_without_a_side_door() -> None:
    """A response with no view is read back from its text."""
    built = (
        '{"a": 1}',
        ui.markdown("*hi*", title="T").text,
        "<domain_rules>\n- r\n</domain_rules>",
        "<action_suggestions>\n- x.y: why\n</action_suggestions>",
    )
    result = CallResult(ToolResponse(built))
    assert result.data == {"a": 1}
    assert result.ui_blocks == (ui.markdown("*hi*", title="T"),)
    assert result.system_rules == ("r",)
    assert result.suggestions == (Suggestion("x.y", "why"),)
    assert result.embeds == ()


@pytest.mark.anyio
async def test_plain_text_and_errors() -> None:
    """Text data reads as a str; an error envelope has no data but a code."""
    tester = FusionTester(app)
    assert (await tester.call("rows", "text")).data == "plain"
    error = await tester.call("rows", "nope")
    assert (error.data, error.error_code, error.is_error) == (None, "UNKNOWN_ACTION", True)
    assert error.error is not None and error.error.message.startswith("Tool 'rows'")


@pytest.mark.anyio
async def test_flat_tools_by_tool_and_action_or_by_name() -> None:
    """A flat action is reached as (tool, action) or by its listed name."""
    tester = FusionTester(app)
    assert (await tester.call("flat", "echo", value="v")).data == "v"
    assert (await tester.call("flat_echo", value="w")).data == "w"


@pytest.mark.anyio
async def test_progress_events_are_recorded() -> None:
    """The result lists the progress reports of the call, in order."""
    result = await FusionTester(app).call("rows", "report")
    assert result.progress == (ProgressEvent(1, 2), ProgressEvent(2, 2, "done"))


@pytest.mark.anyio
async def test_context_override() -> None:
    """FusionTester(context=...) gives handlers a test double."""
    assert (await FusionTester(app, context=FakeContext).call("rows", "tenant")).data == "fake"


@pytest.mark.anyio
async def test_meta_reaches_the_request() -> None:
    """FusionTester(meta=...) is the metadata of every call."""
    seen: list[Request] = []

    def factory(request: Request) -> Context:
        seen.append(request)
        return Context(request)

    await FusionTester(app, context=factory, meta={"user": "ada"}).call("rows", "text")
    assert dict(seen[0].meta) == {"user": "ada"}


@pytest.mark.anyio
async def test_action_given_twice_is_a_type_error() -> None:
    """The action is positional; also passing action= is a mistake."""
    with pytest.raises(TypeError, match="positionally"):
        await FusionTester(app).call("rows", "get", action="text")


def test_call_sync() -> None:
    """call_sync runs a call from synchronous code."""
    assert FusionTester(app).call_sync("rows", "text").data == "plain"


def test_list_tools_is_the_apps() -> None:
    """The tester lists exactly what tools/list shows."""
    assert FusionTester(app).list_tools() == app.list_tools()


def test_fixture_makes_testers(fusion_tester: type[FusionTester]) -> None:
    """The pytest plugin's `fusion_tester` fixture builds a tester in one line."""
    tester = fusion_tester(app)
    assert isinstance(tester, FusionTester) and tester.app is app


def test_from_mcp_reads_a_client_result_as_json() -> None:
    """A result's JSON (camelCase) is read back into the same parts the tester gives."""
    built = row_view.present({"id": 1, "lines": [{"sku": "A"}]})
    result = CallResult.from_mcp(built.to_mcp())
    assert result.blocks == built.blocks
    assert result.data == {"id": 1, "lines": [{"sku": "A"}]}
    assert result.system_rules == ("Row rule.", "Child rule.")
    assert result.suggestions == (Suggestion("rows.delete", "Remove it"),)
    assert not result.is_error


def test_from_mcp_reads_objects_and_skips_content_that_is_not_text() -> None:
    """A client's models are read by attribute; an image is no block and is left out."""

    class Item:
        def __init__(self, kind: str, text: str | None = None) -> None:
            self.type, self.text = kind, text

    class Result:
        def __init__(self) -> None:
            self.content = [Item("text", '{"total": 3}'), Item("image")]
            self.is_error = False
            self.structured_content = {"total": 3}

    result = CallResult.from_mcp(Result())
    assert (result.blocks, result.data) == (('{"total": 3}',), {"total": 3})
    assert result.structured_content == {"total": 3}


def test_from_mcp_reads_an_error_envelope() -> None:
    """An ``isError`` result carries its envelope, code and all."""
    sent = {
        "content": [
            {
                "type": "text",
                "text": '<tool_error code="GONE" severity="error">\n'
                "<message>Gone.</message>\n</tool_error>",
            }
        ],
        "isError": True,
    }
    result = CallResult.from_mcp(sent)
    assert (result.is_error, result.error_code, result.data) == (True, "GONE", None)


def test_from_mcp_refuses_a_result_without_text() -> None:
    """A result with no text content has no blocks to read: a clear error."""
    with pytest.raises(ValueError, match="no text content"):
        CallResult.from_mcp({"content": [{"type": "image", "data": "", "mimeType": "x"}]})


def test_the_default_caller_is_the_apps_local_identity() -> None:
    """FusionTester(app) calls as the app's local_identity; identity=None is anonymous."""
    operator = Identity("op", scopes={"notes:read"})
    scoped = Fusion("scoped", local_identity=operator)
    notes = scoped.tool("notes", requires={"notes:read"})

    @notes.action()
    def whoami(ctx: Context) -> str | None:
        return ctx.identity.subject if ctx.identity else None

    assert [tool["name"] for tool in FusionTester(scoped).list_tools()] == ["notes"]
    assert FusionTester(scoped).call_sync("notes", "whoami").data == "op"
    assert FusionTester(scoped, identity=None).list_tools() == []


def _progressive() -> Fusion:
    """A progressive app: its list differs per caller (tools asked for through the catalog)."""
    app = Fusion("fleet", exposure="progressive", definitions="full")
    for kind in ("trucks", "drivers"):
        app.tool(kind, description=f"{kind}.").action("count", read_only=True)(lambda: 3)
    return app


def test_list_tools_shows_a_per_caller_list_as_tools_list_does() -> None:
    """Under progressive exposure the tester lists what its caller asked for, not every tool."""
    tester = FusionTester(_progressive(), identity=Identity("alice"))
    assert [t["name"] for t in tester.list_tools()] == ["tool_catalog"]
    tester.call_sync("tool_catalog", "use", names=["drivers"])
    assert [t["name"] for t in tester.list_tools()] == ["tool_catalog", "drivers"]
    other = tester.as_caller(Identity("bob"))
    assert [t["name"] for t in other.list_tools()] == ["tool_catalog"]


@pytest.mark.anyio
async def test_list_tools_in_an_event_loop_says_to_await_its_async_form() -> None:
    """Inside a running loop a per-caller list is read with list_tools_async; the sync
    form says so rather than answering the wrong list."""
    tester = FusionTester(_progressive(), identity=Identity("alice"))
    assert [t["name"] for t in await tester.list_tools_async()] == ["tool_catalog"]
    with pytest.raises(RuntimeError, match=r"Already running"):
        tester.list_tools()


def test_list_tools_reads_the_callers_tenant() -> None:
    """A tool disabled for the caller's tenant is not listed to it."""
    app = Fusion("tenants", definitions="full")
    app.tool("a").action("go")(lambda: 1)
    b = app.tool("b")
    b.action("go")(lambda: 2)
    anyio.run(functools.partial(b.disable, tenant="globex"))
    names = [
        t["name"] for t in FusionTester(app, identity=Identity("x", tenant="globex")).list_tools()
    ]
    assert names == ["a"]
