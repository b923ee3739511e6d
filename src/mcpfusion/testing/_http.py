"""``HttpTester``: the official MCP client on the app's real ASGI app, in-process, no port."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import httpx2

from mcpfusion._app.app import Fusion
from mcpfusion._serve.options import HttpOptions, http_options
from mcpfusion.testing._result import CallResult
from mcpfusion.testing._tester import call_target

if TYPE_CHECKING:
    from mcpfusion._serve.http.inprocess import HttpSession


class HttpTester:
    """Drives ``app`` over streamable HTTP as served, through an in-memory transport.

    Everything ``asgi_app`` serves takes part (the request guard, bearer authorization,
    sessions, the hot path, the app's lifespan); only the socket is left out, so a test
    needs no free port and no server process. The client is the official MCP client.

    Example::

        async with HttpTester(app, headers={"Authorization": f"Bearer {key}"}, auth=auth) as t:
            result = await t.call("billing", "get_invoice", invoice_id="INV-1")
            assert result.system_rules == ("amount_cents is in CENTS.",)

    Args:
        app: the application under test.
        options: how it is served (``HttpOptions``; the defaults otherwise).
        headers: sent with every request, ``Authorization`` included.
        **changes: ``HttpOptions`` fields to set, e.g. ``stateless=True`` or ``auth=...``.

    Raises:
        TypeError: on a name that is not an ``HttpOptions`` field.
    """

    def __init__(
        self,
        app: Fusion,
        *,
        options: HttpOptions | None = None,
        headers: Mapping[str, str] | None = None,
        **changes: Any,
    ) -> None:
        self.app = app
        self.options = http_options(options, changes)
        self.headers = dict(headers or {})
        self._stack: contextlib.AsyncExitStack | None = None
        self._session: HttpSession | None = None

    async def __aenter__(self) -> Self:
        """Starts serving (the app's lifespan too) and opens the client session."""
        # Imported here: `import mcpfusion.testing` stays free of the MCP SDK.
        from mcpfusion._serve.http.inprocess import http_session

        async with contextlib.AsyncExitStack() as stack:
            self._session = await stack.enter_async_context(
                http_session(self.app, self.options, headers=self.headers)
            )
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Closes the session and stops serving."""
        stack, self._stack, self._session = self._stack, None, None
        if stack is not None:
            await stack.aclose()

    @property
    def session(self) -> HttpSession:
        """The open session.

        Raises:
            RuntimeError: outside ``async with``.
        """
        if self._session is None:
            raise RuntimeError("use the HttpTester in 'async with HttpTester(app) as tester'")
        return self._session

    @property
    def http(self) -> httpx2.AsyncClient:
        """The HTTP client on the same app, for requests outside the protocol."""
        return self.session.http

    @property
    def server_info(self) -> dict[str, Any]:
        """The ``serverInfo`` the server sent at initialization."""
        return self.session.server_info

    async def list_tools(self) -> list[dict[str, Any]]:
        """The tools ``tools/list`` shows this client (its credentials' scopes)."""
        return await self.session.list_tools()

    async def call(self, tool: str, action: str | None = None, /, **arguments: Any) -> CallResult:
        """Calls ``action`` of ``tool`` with keyword arguments, as ``FusionTester.call`` does."""
        name, args = call_target(self.app, tool, action, arguments)
        return await self.call_tool(name, args)

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> CallResult:
        """Calls the MCP tool ``name`` and reads the result it received by block."""
        return CallResult.from_mcp(await self.session.call_tool(name, arguments or {}))

    async def list_resources(self) -> list[dict[str, Any]]:
        """The resources ``resources/list`` shows this client."""
        return await self.session.list_resources()

    async def read_resource(self, uri: str) -> dict[str, Any]:
        """The ``resources/read`` result for ``uri``, as sent."""
        return await self.session.read_resource(uri)

    async def list_prompts(self) -> list[dict[str, Any]]:
        """The prompts ``prompts/list`` shows this client."""
        return await self.session.list_prompts()

    async def get_prompt(self, name: str, /, **arguments: str) -> dict[str, Any]:
        """The ``prompts/get`` result, as sent."""
        return await self.session.get_prompt(name, arguments)
