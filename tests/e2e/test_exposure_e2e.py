"""Progressive exposure with the official client over stdio and stateful HTTP, both eras:
the catalog tool, list_changed, and the caller's list re-read."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, types
from mcp.client.session import IncomingMessage
from mcp.shared.subscriptions import ToolsListChanged

from mcpfusion._tools.caller_state import CONVERSATION_META
from tests.e2e import servers

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TARGET = f"{Path(__file__).parent / 'catalog_app.py'}:app"

# Exposure follows the caller (identity and conversation), as ctx.caller_state does: each
# test is its own conversation, so the module's one HTTP server keeps them apart.
LEGACY: Any = {CONVERSATION_META: "legacy-conversation"}
CURRENT: Any = {CONVERSATION_META: "current-conversation"}

Opener = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture(scope="module")
async def catalog_url() -> AsyncIterator[str]:
    """The catalog app over streamable HTTP (stateful)."""
    async with servers.http_server(target=TARGET) as url:
        yield url


@pytest.fixture(params=("stdio", "http"))
def opener(request: pytest.FixtureRequest) -> Opener:
    """Opens the official client on the catalog app over each transport."""
    if request.param == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "mcpfusion.cli", "run", TARGET], cwd=servers.REPO
        )
        return lambda **kw: Client(params, **kw)
    url = request.getfixturevalue("catalog_url")
    return lambda **kw: Client(url, **kw)


async def listed(client: Client, meta: Any) -> list[str]:
    """The tool names ``tools/list`` shows the caller of ``meta`` (never from a cache)."""
    result = await client.list_tools(meta=meta, cache_mode="bypass")
    return sorted(tool.name for tool in result.tools)


def text_of(result: types.CallToolResult) -> str:
    """The text blocks of a result, joined."""
    return "".join(getattr(block, "text", "") for block in result.content)


async def search_and_use(client: Client) -> None:
    """Searches the catalog for trucks and asks for them."""
    search = {"action": "search", "words": "trucks", "limit": 1}
    found = await client.call_tool("tool_catalog", search, meta=LEGACY)
    assert not found.is_error and '"name":"trucks"' in text_of(found)
    use = {"action": "use", "names": ["trucks"]}
    used = await client.call_tool("tool_catalog", use, meta=LEGACY)
    assert (used.is_error, text_of(used)) == (False, "Listed: trucks.")


async def test_legacy_client_hears_list_changed_and_relists(opener: Opener) -> None:
    """On 2025-11-25 `use` sends notifications/tools/list_changed; the re-read list has it."""
    heard = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard.set()

    with anyio.fail_after(60):
        async with opener(mode="legacy", message_handler=on_message) as client:
            assert await listed(client, LEGACY) == ["depots", "tool_catalog"]
            await search_and_use(client)
            await heard.wait()
            assert await listed(client, LEGACY) == ["depots", "tool_catalog", "trucks"]


async def test_listen_stream_hears_the_change_and_a_direct_call_lists_a_tool(
    opener: Opener,
) -> None:
    """On 2026-07-28 the listen stream carries the change; calling an unlisted tool
    answers it and lists it too."""
    with anyio.fail_after(60):
        async with opener(mode="2026-07-28") as client:
            assert await listed(client, CURRENT) == ["depots", "tool_catalog"]
            async with client.listen(tools_list_changed=True) as subscription:
                arguments = {"action": "count", "depot": "d-1"}
                direct = await client.call_tool("drivers", arguments, meta=CURRENT)
                assert (direct.is_error, text_of(direct)) == (False, "d-1: 3 drivers")
                event: Any = await subscription.__anext__()
            assert event == ToolsListChanged()
            assert await listed(client, CURRENT) == ["depots", "drivers", "tool_catalog"]


async def test_stateless_http_lists_what_use_asked_for() -> None:
    """Stateless HTTP keeps exposure in the caller's state: no notice can reach the
    client, but its next tools/list shows what it asked for."""
    async with servers.http_server("--stateless", target=TARGET) as url:
        with anyio.fail_after(60):
            async with Client(url, mode="legacy") as client:
                assert await listed(client, LEGACY) == ["depots", "tool_catalog"]
                await search_and_use(client)
                assert await listed(client, LEGACY) == ["depots", "tool_catalog", "trucks"]
