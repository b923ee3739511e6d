"""The official MCP client on the real ASGI app through an in-memory HTTP transport, no port."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel

from mcpfusion._serve.http.app import asgi_app
from mcpfusion._serve.options import HttpOptions
from mcpfusion._serve.sdk import ServableApp

BASE_URL = "http://127.0.0.1"
"""The origin requests claim: loopback, so the default Host and Origin checks pass."""


def _plain(value: BaseModel) -> dict[str, Any]:
    """An SDK model as the JSON-compatible dict it was sent as."""
    found: dict[str, Any] = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return found


class HttpSession:
    """One client session over the ASGI app; every answer is plain JSON-compatible data.

    Attributes:
        http: the HTTP client the session uses, for requests outside the protocol (a
            ``GET`` of the protected-resource metadata, a request with other headers).
        path: the MCP endpoint's path.
    """

    def __init__(self, client: Client, http: httpx2.AsyncClient, path: str) -> None:
        self._client = client
        self.http = http
        self.path = path

    @property
    def server_info(self) -> dict[str, Any]:
        """The ``serverInfo`` the server sent (empty when it sent none)."""
        info = self._client.server_info
        return {} if info is None else _plain(info)

    async def list_tools(self) -> list[dict[str, Any]]:
        """The ``tools/list`` result's tools."""
        return [_plain(tool) for tool in (await self._client.list_tools()).tools]

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The ``tools/call`` result, as sent (``content``, ``isError``, ...)."""
        return _plain(await self._client.call_tool(name, dict(arguments)))

    async def list_resources(self) -> list[dict[str, Any]]:
        """The ``resources/list`` result's resources."""
        return [_plain(item) for item in (await self._client.list_resources()).resources]

    async def read_resource(self, uri: str) -> dict[str, Any]:
        """The ``resources/read`` result, as sent."""
        return _plain(await self._client.read_resource(uri))

    async def list_prompts(self) -> list[dict[str, Any]]:
        """The ``prompts/list`` result's prompts."""
        return [_plain(item) for item in (await self._client.list_prompts()).prompts]

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> dict[str, Any]:
        """The ``prompts/get`` result, as sent."""
        return _plain(await self._client.get_prompt(name, dict(arguments)))


@contextlib.asynccontextmanager
async def http_session(
    app: ServableApp,
    options: HttpOptions,
    *,
    headers: Mapping[str, str] | None = None,
) -> AsyncIterator[HttpSession]:
    """Serves ``app`` as ``asgi_app`` does, lifespan included, to one in-memory client.

    Args:
        app: the app.
        options: how it is served (the path, stateless, JSON bodies, auth, ...).
        headers: sent with every request (``Authorization``, say).
    """
    served = asgi_app(app, options)
    transport = httpx2.ASGITransport(app=served)
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(served.router.lifespan_context(served))
        http = await stack.enter_async_context(
            httpx2.AsyncClient(transport=transport, base_url=BASE_URL, headers=dict(headers or {}))
        )
        url = f"{BASE_URL}{options.path}"
        client = await stack.enter_async_context(
            Client(streamable_http_client(url, http_client=http))
        )
        yield HttpSession(client, http, options.path)
