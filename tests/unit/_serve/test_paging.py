"""Pages of the four list methods: cursors, their refusal, and every serving path alike."""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcpfusion import Fusion, Identity, Workflow
from mcpfusion._serve.paging import STALE_CURSOR, page, version_of
from mcpfusion._serve.sdk import build_server
from tests.e2e import paged_app
from tests.stdio_session import exchange

pytestmark = pytest.mark.anyio

ITEMS = [f"item_{n}" for n in range(7)]
MODES = ("legacy", "auto")  # 2025-11-25, and the newest the client and server share


def _same(item: str) -> str:
    return item


def walk(items: list[str], size: int) -> list[list[str]]:
    """Every page of ``items``, following each nextCursor to the end."""
    pages, cursor = [], None
    while True:
        shown, cursor = page(items, _same, cursor, size)
        pages.append(list(shown))
        if cursor is None:
            return pages


def test_pages_cover_the_list_once_in_order() -> None:
    """Following nextCursor from the first page lists every item once, in order."""
    assert walk(ITEMS, 3) == [ITEMS[0:3], ITEMS[3:6], ITEMS[6:]]
    assert walk(ITEMS, 7) == [ITEMS]
    assert walk(ITEMS, 100) == [ITEMS]
    assert walk([], 2) == [[]]


def test_without_a_page_size_one_page_holds_everything() -> None:
    """No page size: the whole list and no nextCursor, as before paging existed."""
    assert page(ITEMS, _same, None, None) == (ITEMS, None)


def _cursor(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "bogus",
        "x" * 500,
        "é",
        "!!!!",
        _cursor(f"0.{version_of(ITEMS)}"),  # page one has no cursor
        _cursor(f"7.{version_of(ITEMS)}"),  # past the end
        _cursor(f"03.{version_of(ITEMS)}"),  # not the form this server writes
        _cursor(f"-3.{version_of(ITEMS)}"),
        _cursor(f"3.{version_of(ITEMS)}") + "=",  # padded
        _cursor(f"3.{version_of(ITEMS)}.x"),
        _cursor(json.dumps({"offset": 3})),
    ],
)
def test_a_cursor_this_server_did_not_make_is_refused(cursor: str) -> None:
    """A bogus, forged or out-of-range cursor is JSON-RPC -32602, not a silent first page."""
    with pytest.raises(MCPError, match=r"^Invalid cursor") as caught:
        page(ITEMS, _same, cursor, 3)
    assert caught.value.error.code == -32602


def test_any_cursor_is_refused_when_nothing_is_paged() -> None:
    """Without a page size the server never made a cursor, so any one is refused."""
    _, cursor = page(ITEMS, _same, None, 3)
    with pytest.raises(MCPError, match=r"^Invalid cursor"):
        page(ITEMS, _same, cursor, None)


def test_a_cursor_from_before_the_list_changed_is_stale() -> None:
    """A cursor made for another list (changed since, or another caller's) is refused as
    stale, so a client lists again instead of skipping or repeating entries."""
    _, cursor = page(ITEMS, _same, None, 3)
    with pytest.raises(MCPError, match=r"^Stale cursor") as caught:
        page(["item_new", *ITEMS], _same, cursor, 3)
    assert caught.value.error.message == STALE_CURSOR


def test_a_cursor_pages_on_any_worker() -> None:
    """The cursor depends only on the list, so another worker with the same catalog takes it."""
    _, cursor = page(ITEMS, _same, None, 3)
    assert page(list(ITEMS), _same, cursor, 3)[0] == ITEMS[3:6]


def test_the_page_size_is_checked_when_the_app_is_defined() -> None:
    """A page size that is not a positive int fails at definition time."""
    for bad in (0, -1, 2.5, "3", True):
        with pytest.raises(Exception, match="page_size is a positive int or None"):
            Fusion("x", page_size=bad)  # type: ignore[arg-type]


async def _all(fetch: Callable[[str | None], Awaitable[Any]], field: str) -> list[list[Any]]:
    pages, cursor = [], None
    while True:
        result = await fetch(cursor)
        pages.append(getattr(result, field))
        cursor = result.next_cursor
        if cursor is None:
            return pages


def _paged(size: int | None) -> Fusion:
    app = paged_app.app
    app.page_size = size
    return app


@pytest.fixture
def paged() -> Any:
    """The paged app, two entries a page; reset after the test."""
    yield _paged(2)
    _paged(None)


@pytest.mark.parametrize("mode", MODES)
async def test_every_list_is_paged_through_the_sdk(mode: str, paged: Fusion) -> None:
    """tools, resources, templates and prompts come two a page, each walked to its end,
    in both protocol eras; hidden tools are filtered before paging."""
    async with Client(build_server(paged), mode=mode) as client:
        tools = await _all(lambda c: client.list_tools(cursor=c), "tools")
        resources = await _all(lambda c: client.list_resources(cursor=c), "resources")
        templates = await _all(
            lambda c: client.list_resource_templates(cursor=c), "resource_templates"
        )
        prompts = await _all(lambda c: client.list_prompts(cursor=c), "prompts")
    assert [[t.name for t in p] for p in tools] == [
        ["tool_1", "tool_2"],
        ["tool_3", "tool_4"],
        ["tool_5"],
    ]
    assert [len(p) for p in resources] == [2, 1]
    assert [str(r.uri) for p in resources for r in p] == [f"paged://fixed/{n}" for n in (1, 2, 3)]
    assert [len(p) for p in templates] == [2, 1]
    assert [[p.name for p in page] for page in prompts] == [["prompt_1", "prompt_2"], ["prompt_3"]]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["tools", "resources", "resource_templates", "prompts"])
async def test_a_bogus_cursor_is_refused_on_every_list(
    mode: str, method: str, paged: Fusion
) -> None:
    """Each list refuses a cursor it never made with -32602."""
    async with Client(build_server(paged), mode=mode) as client:
        lister = getattr(client, f"list_{method}")
        with pytest.raises(MCPError, match=r"^Invalid cursor") as caught:
            await lister(cursor="not-a-cursor")
    assert caught.value.error.code == -32602


async def test_a_bogus_cursor_is_refused_without_paging() -> None:
    """With no page size (the default) a cursor is refused too, no longer ignored."""
    async with Client(build_server(_paged(None))) as client:
        assert (await client.list_tools()).next_cursor is None
        with pytest.raises(MCPError, match=r"^Invalid cursor"):
            await client.list_tools(cursor="abc")


async def test_an_admin_sees_its_own_pages() -> None:
    """Each caller pages its own list: the admin's has the admin tool, on its last page."""
    app = Fusion("scoped", page_size=2, local_identity=Identity("root", scopes={"admin"}))
    for name in ("a", "b", "c"):
        app.tool(name).action("go", requires={"admin"} if name == "c" else ())(lambda: "ok")
    async with Client(build_server(app)) as client:
        pages = await _all(lambda c: client.list_tools(cursor=c), "tools")
    assert [[t.name for t in p] for p in pages] == [["a", "b"], ["c"]]


async def test_a_cursor_from_before_a_tool_was_enabled_is_stale() -> None:
    """After a tool is enabled at run time (list_changed), an earlier cursor is refused."""
    app = Fusion("toggled", page_size=1)
    for name in ("a", "b"):
        app.tool(name).action("go")(lambda: "ok")
    late = app.tool("late", enabled=False)
    late.action("go")(lambda: "ok")
    async with Client(build_server(app)) as client:
        first = await client.list_tools()
        await late.enable()
        with pytest.raises(MCPError, match=r"^Stale cursor"):
            await client.list_tools(cursor=first.next_cursor)
        again = await _all(lambda c: client.list_tools(cursor=c), "tools")
    assert [t.name for p in again for t in p] == ["a", "b", "late"]


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_the_stdio_hot_path_sends_the_sdks_pages(version: str, paged: Fusion) -> None:
    """The hot path's first page of tools/list is byte for byte the SDK's, nextCursor too;
    the pages after it are the SDK's to answer."""
    messages: list[dict[str, Any]] = [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]
    via_sdk = await exchange(paged, messages, hot=False, version=version)
    via_hot = await exchange(paged, messages, hot=True, version=version)
    assert via_hot == via_sdk
    cursor = json.loads(via_hot[0])["result"]["nextCursor"]
    follow: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": cursor}}
    ]
    second = json.loads((await exchange(paged, follow, hot=True, version=version))[0])
    assert [t["name"] for t in second["result"]["tools"]] == ["tool_3", "tool_4"]


async def test_a_workflow_pages_each_callers_own_list() -> None:
    """With a workflow, the tools the caller's state allows are paged, a list of its own."""
    flow = Workflow(
        ["open", "done"],
        initial="open",
        transitions=[("a.go", "open", "done")],
        allowed={"c": ["done"]},
    )
    app = Fusion("flow", page_size=1, workflow=flow)
    for name in ("a", "b", "c"):
        app.tool(name).action("go")(lambda: "ok")
    async with Client(build_server(app)) as client:
        before = await _all(lambda c: client.list_tools(cursor=c), "tools")
        await client.call_tool("a", {"action": "go"})
        after = await _all(lambda c: client.list_tools(cursor=c), "tools")
    assert [[t.name for t in p] for p in before] == [["a"], ["b"]]
    assert [[t.name for t in p] for p in after] == [["a"], ["b"], ["c"]]
