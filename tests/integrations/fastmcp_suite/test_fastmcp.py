"""mcpfusion.integrations.fastmcp, through FastMCP's in-memory client (runs in .venv-fastmcp)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from fastmcp import Client, Context, FastMCP
from fastmcp.client.client import CallToolResult as ClientResult
from mcp import Client as SdkClient
from mcp.server.mcpserver import Context as SdkContext
from mcp.server.mcpserver import MCPServer
from mcp.types import TextContent, Tool

from mcpfusion import DefinitionError, Presenter
from mcpfusion.integrations import sdk
from mcpfusion.integrations.fastmcp import ErrorEnvelopes, mount, presented
from mcpfusion.testing import CallResult, FusionTester
from tests.integrations.shared import (
    CALLS,
    MOUNTED_CALLS,
    ROWS,
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

Progress = list[tuple[float, float | None, str | None]]


def host() -> FastMCP[Any]:
    """A FastMCP server whose tools present their values with the shared Presenter."""
    mcp: FastMCP[Any] = FastMCP("host")
    mcp.add_middleware(ErrorEnvelopes())

    @mcp.tool
    @presented(user_view)
    def get_user(user_id: int) -> UserRow:
        """Reads one user."""
        return UserRow.model_validate(find(user_id))

    @mcp.tool
    @presented(user_view)
    async def list_users(ctx: Context) -> list[UserRow]:
        """Lists the users."""
        await ctx.report_progress(1, 1, "read")
        return [UserRow.model_validate(row) for row in ROWS]

    return mcp


def sdk_host() -> MCPServer[Any]:
    """The same tools in the SDK's MCPServer."""
    server: MCPServer[Any] = MCPServer("sdk-host")

    @server.tool()
    @sdk.presented(user_view)
    def get_user(user_id: int) -> UserRow:
        return UserRow.model_validate(find(user_id))

    @server.tool()
    @sdk.presented(user_view)
    async def list_users(ctx: SdkContext[Any, Any]) -> list[UserRow]:
        return [UserRow.model_validate(row) for row in ROWS]

    return server


def texts(result: Any) -> list[str]:
    """The text of every content item of a client's result."""
    found = []
    for item in result.content:
        assert isinstance(item, TextContent)
        found.append(item.text)
    return found


def wire(result: Any) -> dict[str, Any]:
    """What a client reads of a result: blocks, the flag and structured content."""
    return {
        "blocks": texts(result),
        "is_error": result.is_error,
        "structured": result.structured_content,
    }


async def call(server: FastMCP[Any], name: str, arguments: dict[str, Any]) -> ClientResult:
    """One call through FastMCP's in-memory client, error results returned, not raised."""
    async with Client(server) as client:
        result: ClientResult = await client.call_tool(name, arguments, raise_on_error=False)
    return result


@pytest.mark.parametrize(("name", "arguments"), CALLS)
async def test_app_fastmcp_and_mcpserver_send_the_same_bytes(
    name: str, arguments: dict[str, Any]
) -> None:
    """One Presenter: byte-identical blocks from an app, a FastMCP tool and an MCPServer tool."""
    expected = await reference_app().call_tool(app_name(name), arguments)
    through_fastmcp = await call(host(), name, arguments)
    async with SdkClient(sdk_host()) as client:
        through_sdk = await client.call_tool(name, arguments)
    assert texts(through_fastmcp) == texts(through_sdk) == list(expected.blocks)
    assert through_fastmcp.is_error is through_sdk.is_error is expected.is_error
    assert through_fastmcp.structured_content is None


def _row(user_id: int) -> UserRow:
    return UserRow.model_validate(find(user_id))


def _as_model(user_id: int) -> UserRow:
    return _row(user_id)


def _as_dict(user_id: int) -> dict[str, Any]:
    return _row(user_id).model_dump()


def _as_list(user_id: int) -> list[UserRow]:
    return [_row(user_id)]


def _as_any(user_id: int) -> Any:
    return _row(user_id)


def _unannotated(user_id: int):  # type: ignore[no-untyped-def]
    return _row(user_id)


@pytest.mark.parametrize("fn", [_as_model, _as_dict, _as_list, _as_any, _unannotated])
async def test_the_hash_is_never_sent_whatever_the_annotation(fn: Callable[[int], Any]) -> None:
    """FastMCP derives no output schema from the annotation, so the raw row never leaves."""
    mcp: FastMCP[Any] = FastMCP("host")
    mcp.tool(presented(user_view)(fn), name="get_user")
    async with Client(mcp) as client:
        [tool] = await client.list_tools()
        result = await client.call_tool("get_user", {"user_id": 1})
    assert tool.output_schema is None
    assert result.structured_content is None
    assert "password_hash" not in json.dumps(tool.model_dump(mode="json"))
    assert SECRET not in json.dumps([item.model_dump(mode="json") for item in result.content])
    assert texts(result)[0].startswith('[\n  {\n    "id": 1' if fn is _as_list else '{\n  "id": 1')


async def test_without_presented_fastmcp_would_send_the_hash() -> None:
    """Why the decorator matters: FastMCP serializes the annotated value, hash and all."""
    mcp: FastMCP[Any] = FastMCP("host")
    mcp.tool(_as_model, name="get_user")
    result = await call(mcp, "get_user", {"user_id": 1})
    assert result.structured_content is not None
    assert result.structured_content["password_hash"] == SECRET


async def test_a_tool_error_of_any_tool_is_the_apps_envelope() -> None:
    """``ToolError`` sends the app's ``<tool_error>``, presented or not (``ErrorEnvelopes``)."""
    mcp = host()

    @mcp.tool
    def plain(user_id: int) -> dict[str, Any]:
        return find(user_id)

    expected = await reference_app().call_tool("users_get_user", {"user_id": 9})
    for name in ("get_user", "plain"):
        result = await call(mcp, name, {"user_id": 9})
        assert wire(result) == {
            "blocks": list(expected.blocks),
            "is_error": True,
            "structured": None,
        }


@pytest.mark.parametrize(
    "arguments", [{"user_id": "nine"}, {}, {"user_id": 1, "verbose": True}, {"user_id": [1]}]
)
async def test_validation_failures_read_like_the_apps(arguments: dict[str, Any]) -> None:
    """Arguments FastMCP rejects become the app's ``<validation_error>``, field for field."""
    result = await call(host(), "get_user", arguments)
    expected = await reference_app().call_tool("users_get_user", arguments)
    [text] = texts(result)
    assert result.is_error
    assert text == expected.blocks[0].replace('action="users/get_user"', 'action="get_user"')


async def test_other_failures_stay_fastmcps() -> None:
    """A FastMCP ``ToolError`` is still FastMCP's own result."""
    from fastmcp.exceptions import ToolError as FastMCPToolError

    mcp = host()

    @mcp.tool
    @presented(user_view)
    def refuse() -> dict[str, Any]:
        raise FastMCPToolError("refused by the host")

    result = await call(mcp, "refuse", {})
    assert (result.is_error, texts(result)) == (True, ["refused by the host"])


async def test_progress_of_the_context_passes_through() -> None:
    """``ctx.report_progress`` in a presented async tool reaches the client."""
    events: Progress = []

    async def record(progress: float, total: float | None, message: str | None) -> None:
        events.append((progress, total, message))

    async with Client(host(), progress_handler=record) as client:
        await client.call_tool("list_users", {})
    assert events == [(1, 1, "read")]


async def test_presenter_callbacks_receive_fastmcps_context() -> None:
    """The tool's FastMCP ``Context`` is the ``ctx`` of the Presenter's callbacks."""
    seen: list[Any] = []
    view = Presenter("Seen", UserRow)

    @view.rules
    def _record(row: dict[str, Any], ctx: Any) -> None:
        seen.append(ctx)

    mcp: FastMCP[Any] = FastMCP("host")

    @mcp.tool
    @presented(view)
    async def probe(ctx: Context) -> dict[str, Any]:
        return find(1)

    @mcp.tool
    @presented(view)
    def probe_sync() -> dict[str, Any]:
        return find(1)

    await call(mcp, "probe", {})
    await call(mcp, "probe_sync", {})
    assert [type(ctx) for ctx in seen] == [Context, type(None)]


def test_presented_above_the_tool_decorator_is_refused() -> None:
    """``@presented`` above ``@mcp.tool`` would present nothing: a definition error."""
    mcp: FastMCP[Any] = FastMCP("host")

    def get_user(user_id: int) -> dict[str, Any]:
        return find(user_id)

    registered = mcp.tool(get_user)
    with pytest.raises(DefinitionError, match=r"below @mcp\.tool"):
        presented(user_view)(registered)


# -- mounting an app -----------------------------------------------------------------------


def spelled(tool: Tool) -> dict[str, Any]:
    """A listed tool as the app spells it (FastMCP adds a title and its own _meta)."""
    return tool.model_dump(
        by_alias=True,
        exclude_none=True,
        include={"name", "description", "input_schema", "output_schema", "annotations"},
    )


async def test_mounted_tools_are_listed_as_the_app_lists_them() -> None:
    """Names, descriptions, schemas and annotations follow the app exactly."""
    app = mounted_app()
    mcp = host()
    mount(app, mcp)
    async with Client(mcp) as client:
        listed = await client.list_tools()
    mounted = [spelled(t) for t in listed if t.name not in ("get_user", "list_users")]
    assert mounted == app.list_tools()


@pytest.mark.parametrize(("name", "arguments"), MOUNTED_CALLS)
async def test_mounted_calls_send_exactly_the_apps_results(
    name: str, arguments: dict[str, Any]
) -> None:
    """Every result, validation errors and structured content included, is the app's."""
    mcp: FastMCP[Any] = FastMCP("host")
    mount(mounted_app(), mcp)
    result = await call(mcp, name, arguments)
    expected = await mounted_app().call_tool(name, arguments)
    assert wire(result) == {
        "blocks": list(expected.blocks),
        "is_error": expected.is_error,
        "structured": expected.structured_content,
    }


def test_mounting_over_a_tool_follows_fastmcps_duplicate_setting() -> None:
    """A name the server already serves is refused when FastMCP refuses duplicates."""
    mcp: FastMCP[Any] = FastMCP("host", on_duplicate="error")

    @mcp.tool(name="report_run")
    def taken() -> str:
        return "mine"

    with pytest.raises(ValueError, match="already exists"):
        mount(mounted_app(), mcp)


async def test_mounted_tools_report_progress_through_fastmcp() -> None:
    """``ctx.progress`` in a mounted app's handler reaches FastMCP's client."""
    mcp: FastMCP[Any] = FastMCP("host")
    mount(progress_app(), mcp)
    events: Progress = []

    async def record(progress: float, total: float | None, message: str | None) -> None:
        events.append((progress, total, message))

    async with Client(mcp, progress_handler=record) as client:
        await client.call_tool("jobs", {"action": "run"})
    assert events == [(1.0, 2.0, "half")]


async def test_mounted_tools_answer_fastmcps_in_process_calls() -> None:
    """``FastMCP.call_tool`` in-process reaches the app too."""
    mcp: FastMCP[Any] = FastMCP("host")
    mount(progress_app(), mcp)
    result = await mcp.call_tool("jobs", {"action": "run"})
    assert [item.text for item in result.content if isinstance(item, TextContent)] == ["done"]


# -- the tester's assertions on FastMCP results --------------------------------------------


async def test_call_result_reads_a_fastmcp_client_result() -> None:
    """``CallResult.from_mcp`` on FastMCP's client result gives the tester's parts."""
    result = CallResult.from_mcp(await call(host(), "get_user", {"user_id": 1}))
    expected = await FusionTester(reference_app()).call_tool("users_get_user", {"user_id": 1})
    assert result.data == expected.data
    assert result.system_rules == expected.system_rules
    assert result.suggestions == expected.suggestions
    assert result.blocks == expected.blocks
