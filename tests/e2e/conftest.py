"""Fixtures of the end-to-end suite: the sample app and its servers on real transports."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest
from mcp import Client

from tests.e2e import servers
from tests.e2e.sample_app import app as sample

Connect = Callable[..., AbstractAsyncContextManager[Client]]

TRANSPORTS = ("stdio", "http", "http-stateless")


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Runs the suite on asyncio, with one event loop for the session-wide servers."""
    return "asyncio"


@pytest.fixture(scope="session")
def app() -> Any:
    """The sample app, in this process: the reference every transport is compared with."""
    return sample


@pytest.fixture(scope="session")
async def http_url() -> AsyncIterator[str]:
    """A stateful streamable-HTTP server (``mcpfusion run --http``) shared by the session."""
    async with servers.http_server() as url:
        yield url


@pytest.fixture(scope="session")
async def stateless_url() -> AsyncIterator[str]:
    """A stateless streamable-HTTP server shared by the session."""
    async with servers.http_server("--stateless") as url:
        yield url


@pytest.fixture(params=TRANSPORTS)
def connect(request: pytest.FixtureRequest) -> Connect:
    """Opens an official-SDK client over each transport in turn: ``async with connect():``."""
    if request.param == "stdio":
        return lambda **kw: Client(servers.stdio_params(), **kw)
    url = request.getfixturevalue("http_url" if request.param == "http" else "stateless_url")
    return lambda **kw: Client(url, **kw)
