"""Paginated lists with the official client over stdio and HTTP, in both protocol eras."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from mcpfusion import Fusion
from tests.e2e import servers
from tests.e2e.test_http_hotpath import _messages, both

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

ERAS = ("legacy", "2026-07-28")
PAGED = f"{Path(__file__).parent / 'paged_app.py'}:app"


@pytest.fixture(scope="module")
async def paged_url() -> AsyncIterator[str]:
    """The paged app over streamable HTTP, two entries a page (``--page-size 2``)."""
    async with servers.http_server("--page-size", "2", target=PAGED) as url:
        yield url


@pytest.fixture(params=("stdio", "http"))
def server(request: pytest.FixtureRequest) -> StdioServerParameters | str:
    """The paged app, two entries a page, over each transport."""
    if request.param == "stdio":
        return StdioServerParameters(
            command=sys.executable,
            args=["-m", "mcpfusion.cli", "run", PAGED, "--page-size", "2"],
            cwd=servers.REPO,
        )
    url: str = request.getfixturevalue("paged_url")
    return url


async def _walk(fetch: Callable[[str | None], Awaitable[Any]], field: str) -> list[list[Any]]:
    """Every page of a list, from the first, following nextCursor to its end."""
    pages, cursor = [], None
    while True:
        result = await fetch(cursor)
        pages.append(getattr(result, field))
        cursor = result.next_cursor
        if cursor is None:
            return pages


@pytest.mark.parametrize("mode", ERAS)
async def test_the_client_walks_every_page_of_every_list(
    server: StdioServerParameters | str, mode: str
) -> None:
    """tools, resources, templates and prompts each come two a page until no nextCursor,
    the tool the caller may not call on none of them, and a bogus cursor is -32602."""
    with anyio.fail_after(60):
        async with Client(server, mode=mode) as client:
            tools = await _walk(lambda c: client.list_tools(cursor=c), "tools")
            resources = await _walk(lambda c: client.list_resources(cursor=c), "resources")
            templates = await _walk(
                lambda c: client.list_resource_templates(cursor=c), "resource_templates"
            )
            prompts = await _walk(lambda c: client.list_prompts(cursor=c), "prompts")
            with pytest.raises(MCPError, match=r"^Invalid cursor") as caught:
                await client.list_prompts(cursor="bogus")
    assert caught.value.error.code == -32602
    assert [[t.name for t in p] for p in tools] == [
        ["tool_1", "tool_2"],
        ["tool_3", "tool_4"],
        ["tool_5"],
    ]
    assert [[str(r.uri) for r in p] for p in resources] == [
        ["paged://fixed/1", "paged://fixed/2"],
        ["paged://fixed/3"],
    ]
    assert [[t.name for t in p] for p in templates] == [["rows_1", "rows_2"], ["rows_3"]]
    assert [[p.name for p in page] for page in prompts] == [
        ["prompt_1", "prompt_2"],
        ["prompt_3"],
    ]


async def test_the_http_hot_path_sends_the_sdks_first_page() -> None:
    """The first page of tools/list from the HTTP hot path is the SDK's, nextCursor too,
    and the SDK's path answers the next page and refuses a bogus cursor alike."""
    app = Fusion("hot-paged", page_size=2)
    for name in ("a", "b", "c"):
        app.tool(name).action("go")(lambda: "ok")
    first = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    with anyio.fail_after(30):
        async with both(app) as (hot, sdk):
            fast, slow = await hot.post(first), await sdk.post(first)
            assert fast.headers["content-type"] == "application/json"  # the hot path's body
            assert _messages(fast) == _messages(slow)
            cursor = _messages(fast)[0]["result"]["nextCursor"]
            for params in ({"cursor": cursor}, {"cursor": "bogus"}):
                then = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": params}
                assert _messages(await hot.post(then)) == _messages(await sdk.post(then))
            then["params"] = {"cursor": cursor}
            listed = _messages(await hot.post(then))[0]["result"]
    assert [t["name"] for t in listed["tools"]] == ["c"]
    assert "nextCursor" not in listed


async def test_a_cursor_from_one_server_process_pages_on_another() -> None:
    """A cursor made by one server process pages on another serving the same app (what a
    load balancer does between stateless workers): cursors hold no process state."""
    with anyio.fail_after(60):
        async with (
            servers.http_server("--page-size", "2", "--stateless", target=PAGED) as first,
            servers.http_server("--page-size", "2", "--stateless", target=PAGED) as second,
            Client(first) as one,
            Client(second) as other,
        ):
            opened = await one.list_tools()
            following = await other.list_tools(cursor=opened.next_cursor)
            last = await one.list_tools(cursor=following.next_cursor)
    names = [t.name for page in (opened, following, last) for t in page.tools]
    assert names == [f"tool_{n}" for n in range(1, 6)]
    assert last.next_cursor is None
