"""mcpfusion.integrations.sdk: Presenters in MCPServer and low-level Server tools, apps mounted."""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server import Server, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListResourcesResult,
    ListToolsResult,
    PaginatedRequestParams,
    Resource,
    Tool,
)

from mcpfusion import DefinitionError, Presenter, success_structured
from mcpfusion.integrations.sdk import mount, presented, tools
from mcpfusion.server import build_server
from mcpfusion.testing import CallResult, FusionTester, ProgressEvent
from tests.client_results import texts
from tests.integrations.shared import (
    CALLS,
    MOUNTED_CALLS,
    SECRET,
    UserRow,
    app_name,
    find,
    mounted_app,
    progress_app,
    reference_app,
    user_view,
)

pytestmark = pytest.mark.anyio


def host() -> MCPServer[Any]:
    """An MCPServer whose tools present their values with the shared Presenter."""
    server: MCPServer[Any] = MCPServer("host")

    @server.tool()
    @presented(user_view)
    def get_user(user_id: int) -> UserRow:
        """Reads one user."""
        return UserRow.model_validate(find(user_id))

    @server.tool()
    @presented(user_view)
    async def list_users(ctx: Context[Any, Any]) -> list[dict[str, Any]]:
        """Lists the users."""
        await ctx.report_progress(1, 1, "read")
        return ROWS_COPY

    return server


ROWS_COPY = [dict(row) for row in (find(1), find(2), find(3))]


def wire(result: CallToolResult) -> dict[str, Any]:
    """What a client reads of a result: blocks, the flag and structured content."""
    return {
        "blocks": texts(result.content),
        "is_error": result.is_error,
        "structured": result.structured_content,
    }


async def reference(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The same call answered by the mcpfusion app, in the same shape."""
    response = await reference_app().call_tool(app_name(name), arguments)
    return {
        "blocks": list(response.blocks),
        "is_error": response.is_error,
        "structured": response.structured_content,
    }


@pytest.mark.parametrize(("name", "arguments"), CALLS)
async def test_an_mcpserver_tool_sends_the_blocks_the_app_sends(
    name: str, arguments: dict[str, Any]
) -> None:
    """A presented MCPServer tool's result is byte for byte the app's, errors included."""
    async with Client(host()) as client:
        result = await client.call_tool(name, arguments)
    assert wire(result) == await reference(name, arguments)


async def test_the_return_annotation_never_becomes_an_output_schema() -> None:
    """``-> UserRow`` advertises no output schema, so the hash is neither listed nor sent."""
    async with Client(host()) as client:
        listed = await client.list_tools()
        result = await client.call_tool("get_user", {"user_id": 1})
    [get_user] = [tool for tool in listed.tools if tool.name == "get_user"]
    assert get_user.output_schema is None
    assert result.structured_content is None
    assert "password_hash" not in json.dumps(listed.model_dump(mode="json"))
    assert SECRET not in json.dumps(result.model_dump(mode="json"))


async def test_a_tool_keeps_its_name_docstring_and_parameters() -> None:
    """The input schema and description are derived from the original function."""
    async with Client(host()) as client:
        listed = await client.list_tools()
    by_name = {tool.name: tool for tool in listed.tools}
    assert by_name["get_user"].description == "Reads one user."
    assert by_name["get_user"].input_schema["required"] == ["user_id"]
    assert by_name["list_users"].input_schema.get("properties", {}) == {}


async def test_progress_of_the_context_passes_through() -> None:
    """A presented tool's ``ctx.report_progress`` reaches the client."""
    events: list[tuple[float, float | None, str | None]] = []

    async def record(progress: float, total: float | None, message: str | None) -> None:
        events.append((progress, total, message))

    async with Client(host()) as client:
        await client.call_tool("list_users", {}, progress_callback=record)
    assert events == [(1, 1, "read")]


async def test_presenter_callbacks_receive_the_tool_context() -> None:
    """The tool's ``Context`` argument is the ``ctx`` of the Presenter's callbacks."""
    seen: list[Any] = []
    view = Presenter("Seen", UserRow)

    @view.rules
    def _record(row: dict[str, Any], ctx: Any) -> None:
        seen.append(ctx)

    server: MCPServer[Any] = MCPServer("host")

    @server.tool()
    @presented(view)
    async def probe(ctx: Context[Any, Any]) -> dict[str, Any]:
        return find(1)

    async with Client(server) as client:
        await client.call_tool("probe", {})
    assert [type(ctx) for ctx in seen] == [Context]


async def test_data_that_does_not_fit_the_presenter_is_a_presenter_error() -> None:
    """A row missing a schema field is the app's ``PRESENTER_ERROR``, naming the tool."""
    server: MCPServer[Any] = MCPServer("host")

    @server.tool()
    @presented(user_view)
    def broken() -> dict[str, Any]:
        return {"id": 1}

    async with Client(server) as client:
        result = await client.call_tool("broken", {})
    call = CallResult.from_mcp(result)
    assert (call.is_error, call.error_code) == (True, "PRESENTER_ERROR")
    assert call.error is not None
    assert call.error.message.startswith("Tool 'broken' could not present its data.")


async def test_other_exceptions_stay_the_hosts() -> None:
    """An exception mcpfusion does not own is handled by MCPServer as usual."""
    server: MCPServer[Any] = MCPServer("host")

    @server.tool()
    @presented(user_view)
    def crash() -> dict[str, Any]:
        raise RuntimeError("private detail")

    async with Client(server) as client:
        result = await client.call_tool("crash", {})
    assert result.is_error
    assert texts(result.content) == ["Error executing tool crash"]


async def test_without_a_presenter_a_value_is_sent_with_success() -> None:
    """``@presented()`` sends the value as the data block; a ``ToolResponse`` passes as is."""
    server: MCPServer[Any] = MCPServer("host")

    @server.tool()
    @presented()
    def plain() -> dict[str, int]:
        return {"b": 1, "a": 2}

    @server.tool()
    @presented()
    def structured() -> Any:
        return success_structured({"total": 3})

    async with Client(server) as client:
        plain_result = await client.call_tool("plain", {})
        structured_result = await client.call_tool("structured", {})
    assert texts(plain_result.content) == ['{\n  "b": 1,\n  "a": 2\n}']
    assert structured_result.structured_content == {"total": 3}


def test_presented_without_parentheses_says_how_to_write_it() -> None:
    """``@presented`` applied bare is a definition error that shows the right spelling."""

    def tool() -> None: ...

    with pytest.raises(DefinitionError, match=r"Write @presented\(\) or @presented\(view\)"):
        presented(tool)  # type: ignore[arg-type]


def test_unresolvable_hints_fail_where_the_tool_is_defined() -> None:
    """A hint that names an unknown type is a definition error, not a failing call."""

    def tool(user: Missing) -> None:  # type: ignore[name-defined]  # noqa: F821
        ...

    with pytest.raises(DefinitionError, match="cannot resolve the type hints of 'tool'"):
        presented(user_view)(tool)


# -- mounting an app ---------------------------------------------------------------------


def listed(tool: Tool) -> dict[str, Any]:
    """A listed tool as the app's ``list_tools`` spells it."""
    return tool.model_dump(
        by_alias=True,
        exclude_none=True,
        include={"name", "description", "input_schema", "output_schema", "annotations"},
    )


async def test_mounted_tools_are_listed_as_the_app_lists_them() -> None:
    """Names, descriptions, schemas and annotations follow the app exactly."""
    app = mounted_app()
    server = host()
    mount(app, server)
    async with Client(server) as client:
        result = await client.list_tools()
    mounted = [listed(tool) for tool in result.tools if tool.name not in ("get_user", "list_users")]
    assert mounted == app.list_tools()


@pytest.mark.parametrize(("name", "arguments"), MOUNTED_CALLS)
async def test_mounted_calls_send_exactly_the_apps_results(
    name: str, arguments: dict[str, Any]
) -> None:
    """Every result, validation errors and structured content included, is the app's."""
    app = mounted_app()
    server: MCPServer[Any] = MCPServer("host")
    mount(app, server)
    async with Client(server) as client:
        result = await client.call_tool(name, arguments)
    expected = await mounted_app().call_tool(name, arguments)
    assert wire(result) == {
        "blocks": list(expected.blocks),
        "is_error": expected.is_error,
        "structured": expected.structured_content,
    }


async def test_mounted_tools_report_progress_to_the_client() -> None:
    """``ctx.progress`` in a mounted app's handler reaches the host's client."""
    server: MCPServer[Any] = MCPServer("host")
    mount(progress_app(), server)
    events: list[tuple[float, float | None, str | None]] = []

    async def record(progress: float, total: float | None, message: str | None) -> None:
        events.append((progress, total, message))

    async with Client(server) as client:
        await client.call_tool("jobs", {"action": "run"}, progress_callback=record)
    assert events == [(1.0, 2.0, "half")]


async def test_mounted_tools_answer_in_process_calls_too() -> None:
    """``MCPServer.call_tool`` without a request reaches the app, progress dropped."""
    server: MCPServer[Any] = MCPServer("host")
    mount(progress_app(), server)
    result = await server.call_tool("jobs", {"action": "run"})
    assert isinstance(result, CallToolResult)
    assert texts(result.content) == ["done"]


async def test_an_app_can_seed_a_new_server() -> None:
    """``MCPServer(tools=tools(app))`` serves the app's tools from the start."""
    server: MCPServer[Any] = MCPServer("host", tools=tools(mounted_app()))
    async with Client(server) as client:
        result = await client.call_tool("invoices", {"action": "total"})
    assert result.structured_content == {"total": 3}


def test_mounting_over_an_existing_tool_is_refused() -> None:
    """A name the server already serves is a definition error, and nothing is added."""
    server: MCPServer[Any] = MCPServer("host")

    @server.tool(name="report_run")
    def taken() -> str:
        return "mine"

    with pytest.raises(DefinitionError, match="already has tools named report_run"):
        mount(mounted_app(), server)
    assert [tool.name for tool in server._tool_manager.list_tools()] == ["report_run"]


def test_mounting_freezes_the_app() -> None:
    """The tool list is fixed when mounted: a later definition fails loudly."""
    app = mounted_app()
    mount(app, MCPServer("host"))
    with pytest.raises(DefinitionError, match="is frozen"):
        app.tool("late")


# -- the low-level Server ------------------------------------------------------------------


@presented(user_view)
async def get_user_low(user_id: int) -> dict[str, Any]:
    """Reads one user (called by a low-level handler)."""
    return find(user_id)


async def test_a_low_level_handler_sends_a_presented_result() -> None:
    """A presented function called from ``on_call_tool`` returns the app's exact result."""

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        result: CallToolResult = await get_user_low(**(params.arguments or {}))
        return result

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        schema = {"type": "object", "properties": {"user_id": {"type": "integer"}}}
        return ListToolsResult(tools=[Tool(name="get_user", input_schema=schema)])

    server: Server[Any] = Server("low", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    for user_id in (1, 9):
        async with Client(server) as client:
            result = await client.call_tool("get_user", {"user_id": user_id})
        assert wire(result) == await reference("get_user", {"user_id": user_id})


async def test_build_server_takes_hand_written_handlers_for_other_methods() -> None:
    """Resources added to ``build_server(app)`` are served beside the app's exact tools."""
    app = mounted_app()
    server = build_server(app)

    async def on_list_resources(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        return ListResourcesResult(resources=[Resource(uri="memo://readme", name="readme")])

    server.add_request_handler("resources/list", PaginatedRequestParams, on_list_resources)
    async with Client(server) as client:
        resources = await client.list_resources()
        listed_tools: ListToolsResult = await client.list_tools()
        result = await client.call_tool("invoices", {"action": "get", "user_id": 2})
    assert [r.name for r in resources.resources] == ["readme"]
    assert [listed(tool) for tool in listed_tools.tools] == app.list_tools()
    assert texts(result.content) == list(
        (await app.call_tool("invoices", {"action": "get", "user_id": 2})).blocks
    )


# -- the tester's assertions on any server -------------------------------------------------


async def test_call_result_reads_a_client_result_like_the_tester() -> None:
    """``CallResult.from_mcp`` gives the parts ``FusionTester`` gives for the same call."""
    async with Client(host()) as client:
        result = CallResult.from_mcp(await client.call_tool("get_user", {"user_id": 1}))
    expected = await FusionTester(reference_app()).call_tool("users_get_user", {"user_id": 1})
    assert result.data == expected.data
    assert result.system_rules == expected.system_rules
    assert result.directives == expected.directives
    assert result.suggestions == expected.suggestions
    # The wire neutralizes UI content; the side door holds what the callbacks returned.
    sent = expected.ui_blocks + expected.embeds
    assert [block.text for block in result.ui_blocks] == [block.text for block in sent]
    assert result.blocks == expected.blocks


async def test_call_result_reads_an_error_envelope() -> None:
    """An error result's envelope is read with its code and recovery."""
    async with Client(host()) as client:
        result = CallResult.from_mcp(await client.call_tool("get_user", {"user_id": 9}))
    assert (result.is_error, result.error_code, result.data) == (True, "NOT_FOUND", None)
    assert result.error is not None
    assert result.error.recovery == "List users to find a valid id."


def test_call_result_keeps_given_progress() -> None:
    """Progress recorded by the test is carried along."""
    event = ProgressEvent(1, 2, "half")
    result = CallResult.from_mcp({"content": [{"type": "text", "text": "OK"}]}, (event,))
    assert result.progress == (event,)


def test_logging_is_quiet_for_a_tool_error(caplog: pytest.LogCaptureFixture) -> None:
    """A ToolError is an expected outcome: nothing is logged above debug."""
    caplog.set_level(logging.INFO, logger="mcpfusion")
    result = anyio.run(get_user_low, 9)
    assert isinstance(result, CallToolResult) and result.is_error
    assert caplog.records == []
