"""``FusionTester``: calls an app's tools in-process, the way an MCP client would."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import anyio

from mcpfusion._app import Fusion
from mcpfusion._context import ContextFactory
from mcpfusion._schema import DISCRIMINATOR
from mcpfusion.testing._result import CallResult, ProgressEvent


class FusionTester:
    """Calls the tools of ``app`` without a transport and splits each result by kind.

    Example::

        tester = FusionTester(app, context=lambda request: FakeContext(request))
        result = await tester.call("billing", "get_invoice", invoice_id="INV-00001")
        assert result.system_rules == ("amount_cents is in CENTS.",)

    Args:
        app: the application under test.
        context: a context factory used instead of the app's (for fakes).
        meta: request metadata every call carries.
    """

    def __init__(
        self,
        app: Fusion,
        *,
        context: ContextFactory | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.app = app
        self._context = context
        self._meta = meta

    def list_tools(self) -> list[dict[str, Any]]:
        """Exactly what ``tools/list`` shows."""
        return self.app.list_tools()

    async def call(self, tool: str, action: str | None = None, /, **arguments: Any) -> CallResult:
        """Calls ``action`` of ``tool`` with keyword arguments.

        For a grouped tool ``action`` becomes the ``action`` argument; for a flat tool it
        picks the MCP tool ``{tool}{separator}{action}``; ``call("billing_get", ...)`` with
        no action calls an MCP tool by its listed name.
        """
        name, args = self._target(tool, action, arguments)
        return await self.call_tool(name, args)

    def call_sync(self, tool: str, action: str | None = None, /, **arguments: Any) -> CallResult:
        """``call`` for synchronous tests; it runs its own event loop."""
        return anyio.run(functools.partial(self.call, tool, action, **arguments))

    async def call_tool(self, name: str, arguments: Any = None) -> CallResult:
        """Calls the MCP tool ``name`` with ``arguments`` exactly as given, however wrong."""
        events: list[ProgressEvent] = []

        async def record(done: float, total: float | None, message: str | None) -> None:
            events.append(ProgressEvent(done, total, message))

        response = await self.app.call_tool(
            name, arguments, progress=record, meta=self._meta, context=self._context
        )
        return CallResult(response, tuple(events))

    def _target(
        self, tool: str, action: str | None, arguments: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        if action is None:
            return tool, arguments
        defined = self.app.tools.get(tool)
        if defined is not None and defined.exposition == "flat":
            return defined.flat_name(action), arguments
        if DISCRIMINATOR in arguments:
            raise TypeError("pass the action positionally, not also as action=")
        return tool, {DISCRIMINATOR: action, **arguments}
