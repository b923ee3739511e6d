"""Paging `list_invoices` with cursors over streamable HTTP, two workers, the official client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from examples.billing import demo_keys, seed
from examples.billing.db import BillingDB
from tests.e2e.billing_session import HttpServer

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    """The official client on asyncio."""
    return "asyncio"


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`python -m examples.billing --http --stateless --workers 2`, no cursor secret set."""
    db_path = tmp_path_factory.mktemp("paging") / "billing.db"
    BillingDB.open(db_path).close()  # seeded once, before two workers open it
    server = HttpServer.start(db_path, "--stateless", "--workers", "2")
    try:
        yield server.url
    finally:
        server.stop()


@asynccontextmanager
async def client_for(url: str, key: str) -> AsyncIterator[Client]:
    """The official client over its own HTTP connection, authenticated with ``key``."""
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def page_of(result: CallToolResult) -> dict[str, Any]:
    """The ``page`` object of a page's structured content."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    page: dict[str, Any] = result.structured_content["page"]
    return page


async def test_page_through_every_invoice_to_the_end(two_workers: str) -> None:
    """Two connections take turns following the cursors: every invoice once, then the end."""
    ids: list[str] = []
    cursor: str | None = None
    with anyio.fail_after(120):
        async with (
            client_for(two_workers, demo_keys.NORTHWIND_READ) as first,
            client_for(two_workers, demo_keys.NORTHWIND_READ) as second,
        ):
            for turn in range(seed.INVOICES // 50 + 2):
                arguments: dict[str, Any] = {"action": "list_invoices", "_select": ["id"]}
                if cursor is not None:
                    arguments["_cursor"] = cursor
                client = first if turn % 2 == 0 else second
                result = await client.call_tool("billing", arguments)
                page = page_of(result)
                assert page["offset"] == len(ids)
                assert result.structured_content is not None
                ids += [item["id"] for item in result.structured_content["items"]]
                cursor = page["nextCursor"]
                if cursor is None:
                    break
    assert cursor is None
    assert len(ids) == len(set(ids)) == seed.INVOICES
    assert ids == sorted(ids)


async def test_a_northwind_cursor_is_refused_to_globex_over_http(two_workers: str) -> None:
    """Globex sending Northwind's cursor gets INVALID_CURSOR, an isError result."""
    with anyio.fail_after(60):
        async with client_for(two_workers, demo_keys.NORTHWIND_READ) as northwind:
            first = await northwind.call_tool("billing", {"action": "list_invoices"})
        cursor = page_of(first)["nextCursor"]
        assert isinstance(cursor, str)
        async with client_for(two_workers, demo_keys.GLOBEX_READ) as globex:
            refused = await globex.call_tool(
                "billing", {"action": "list_invoices", "_cursor": cursor}
            )
    assert refused.is_error
    assert refused.structured_content is None
    [text] = [item.text for item in refused.content if item.type == "text"]
    assert text.startswith('<tool_error code="INVALID_CURSOR" severity="error">\n')
    assert "This cursor was issued to another caller." in text
    assert "INV-0" not in text
