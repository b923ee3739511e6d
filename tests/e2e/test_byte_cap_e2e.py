"""The byte cap over streamable HTTP with the official client: whole rows, valid output."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
import toon_format
from mcp import Client, types

from tests.e2e import servers

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

CAPPED = f"{Path(__file__).parent / 'capped_app.py'}:app"


@pytest.fixture(scope="module")
async def capped_url() -> AsyncIterator[str]:
    """The capped app over streamable HTTP."""
    async with servers.http_server(target=CAPPED) as url:
        yield url


def _texts(result: types.CallToolResult) -> list[str]:
    return [item.text for item in result.content if isinstance(item, types.TextContent)]


def _size(texts: list[str]) -> int:
    return sum(len(text.encode("utf-8")) for text in texts)


async def test_a_capped_answer_over_http_is_whole_and_valid(capped_url: str) -> None:
    """Over HTTP each capped answer fits its cap, its data decodes to whole leading rows,
    the client's own outputSchema check accepts the structured rows, and a huge field
    alone is TOO_LARGE."""
    with anyio.fail_after(60):
        async with Client(capped_url) as client:
            await client.list_tools()  # the client validates structured output by these
            rows = await client.call_tool("rows", {"action": "listing"})
            records = await client.call_tool("records", {"action": "records"})
            note = await client.call_tool("note", {"action": "note"})
    texts = _texts(rows)
    assert not rows.is_error
    assert _size(texts) <= 1200
    sent = toon_format.decode(texts[0])
    assert sent == [{"id": n, "name": f"ñandú 😀 {n}"} for n in range(len(sent))]
    assert f"{200 - len(sent)} of 200 rows left out" in texts[1]
    assert texts[-1] == "<domain_rules>\n- Ids are stable.\n</domain_rules>"
    assert not records.is_error
    assert records.structured_content is not None
    kept = records.structured_content["result"]
    assert 0 < len(kept) < 200
    assert json.loads(_texts(records)[0]) == records.structured_content
    assert _size(_texts(records)) <= 800
    assert note.is_error
    assert _texts(note)[0].startswith('<tool_error code="TOO_LARGE"')
