"""``FusionTester``: calls an app's tools in-process, the way an MCP client would."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping
from enum import Enum
from types import TracebackType
from typing import Any, Literal, Self

import anyio

from mcpfusion._app.app import Fusion
from mcpfusion._app.pipeline import tenant_of
from mcpfusion._identity import Identity, scopes_of
from mcpfusion._surface.outcome import PromptResult, ReadResult
from mcpfusion._tools.client import ClientChannel
from mcpfusion._tools.context import ContextFactory
from mcpfusion._tools.schema import DISCRIMINATOR
from mcpfusion.testing._result import CallResult, ProgressEvent


class _Local(Enum):
    """The default caller of a tester: the app's ``local_identity``."""

    CALLER = "local"


class FusionTester:
    """Calls the tools of ``app`` without a transport and splits each result by kind.

    Example::

        tester = FusionTester(app, context=lambda request: FakeContext(request))
        result = await tester.call("billing", "get_invoice", invoice_id="INV-00001")
        assert result.system_rules == ("amount_cents is in CENTS.",)

    An app with a lifespan is tested inside it, which runs it as serving does::

        async with FusionTester(app, identity=Identity("alice", scopes={"billing:read"})) as tester:
            result = await tester.call("billing", "list_invoices")

    Args:
        app: the application under test.
        context: a context factory used instead of the app's (for fakes).
        meta: request metadata every call carries.
        identity: the caller of every call; by default the app's ``local_identity``, the
            caller over stdio and ``mcpfusion call`` (anonymous when it sets none), so a
            scoped app lists its tools as it does locally; ``None``: anonymous.
            ``as_caller`` makes a tester for another one.
        client: the client on the other end (a ``FakeClient``), for handlers that log,
            ask the user, sample or list roots; none by default (they find no client).
    """

    def __init__(
        self,
        app: Fusion,
        *,
        context: ContextFactory | None = None,
        meta: Mapping[str, Any] | None = None,
        identity: Identity | Literal[_Local.CALLER] | None = _Local.CALLER,
        client: ClientChannel | None = None,
    ) -> None:
        self.app = app
        self.identity = app.local_identity if identity is _Local.CALLER else identity
        self.client = client
        self._context = context
        self._meta = meta
        self._running: contextlib.AsyncExitStack | None = None

    async def __aenter__(self) -> Self:
        """Starts the app's lifespan (once, however many testers enter it)."""
        stack = contextlib.AsyncExitStack()
        await stack.enter_async_context(self.app.running())
        self._running = stack
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Shuts the lifespan down when the last tester leaves it."""
        stack, self._running = self._running, None
        if stack is not None:
            await stack.aclose()

    def as_caller(self, identity: Identity | None) -> FusionTester:
        """A tester of the same app (and lifespan) whose calls come from ``identity``."""
        other = FusionTester(
            self.app, context=self._context, meta=self._meta, identity=identity, client=self.client
        )
        return other

    def list_tools(self) -> list[dict[str, Any]]:
        """Exactly what ``tools/list`` shows this tester's caller: its scopes' and tenant's
        tools, and where the list differs per caller (a workflow, progressive exposure),
        its own, read from its caller state.

        Raises:
            RuntimeError: a per-caller list asked for inside a running event loop; await
                ``tester.list_tools_async()`` there.
        """
        if getattr(self.app, "per_caller", False):
            return anyio.run(self.list_tools_async)
        return self.app.list_tools(scopes_of(self.identity), tenant=tenant_of(self.identity))

    async def list_tools_async(self) -> list[dict[str, Any]]:
        """``list_tools`` for async tests."""
        return await self.app.list_tools_for(self.identity)

    async def call(self, tool: str, action: str | None = None, /, **arguments: Any) -> CallResult:
        """Calls ``action`` of ``tool`` with keyword arguments.

        For a grouped tool ``action`` becomes the ``action`` argument; for a flat tool it
        picks the MCP tool ``{tool}{separator}{action}``, for a split tool the half listing
        it; ``call("billing_get", ...)`` with no action calls an MCP tool by its listed name.
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
            name,
            arguments,
            progress=record,
            meta=self._meta,
            context=self._context,
            identity=self.identity,
            client=self.client,
        )
        return CallResult(response, tuple(events))

    # -- resources, prompts, completions ---------------------------------------------------

    def list_resources(self) -> list[dict[str, Any]]:
        """Exactly the resources ``resources/list`` shows this tester's caller."""
        return self.app.surface.list_resources(scopes_of(self.identity))

    def list_resource_templates(self) -> list[dict[str, Any]]:
        """Exactly the templates ``resources/templates/list`` shows this tester's caller."""
        return self.app.surface.list_resource_templates(scopes_of(self.identity))

    def list_prompts(self) -> list[dict[str, Any]]:
        """Exactly the prompts ``prompts/list`` shows this tester's caller (its scopes, and
        the prompts enabled for its tenant)."""
        tenant = self.identity.tenant if self.identity is not None else None
        return self.app.surface.list_prompts(scopes_of(self.identity), tenant=tenant)

    async def read_resource(self, uri: str) -> ReadResult:
        """Reads ``uri`` as ``resources/read`` would; ``result.response`` has the view.

        Raises:
            SurfaceError: what the client would receive as a JSON-RPC error.
        """
        return await self.app.surface.read_resource(
            uri,
            identity=self.identity,
            meta=self._meta,
            context=self._context,
            client=self.client,
        )

    async def get_prompt(self, name: str, /, **arguments: Any) -> PromptResult:
        """Gets prompt ``name`` with keyword arguments, as ``prompts/get`` would.

        Raises:
            SurfaceError: what the client would receive as a JSON-RPC error.
        """
        return await self.app.surface.get_prompt(
            name,
            arguments,
            identity=self.identity,
            meta=self._meta,
            context=self._context,
            client=self.client,
        )

    async def complete(
        self,
        ref: str,
        argument: str,
        value: str = "",
        arguments: Mapping[str, str] | None = None,
    ) -> list[str]:
        """The values ``completion/complete`` offers for ``argument`` of ``ref``: a prompt's
        name, or a resource template's URI (anything with ``://``).

        Raises:
            SurfaceError: what the client would receive as a JSON-RPC error.
        """
        kind: Literal["prompt", "resource"] = "resource" if "://" in ref else "prompt"
        found = await self.app.surface.complete(
            kind,
            ref,
            argument,
            value,
            arguments,
            identity=self.identity,
            meta=self._meta,
            context=self._context,
        )
        values: list[str] = found["values"]
        return values

    def _target(
        self, tool: str, action: str | None, arguments: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        return call_target(self.app, tool, action, arguments)


def call_target(
    app: Fusion, tool: str, action: str | None, arguments: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The listed tool name and arguments of ``call(tool, action, **arguments)``.

    Raises:
        TypeError: the action is given both positionally and as ``action=``.
    """
    if action is None:
        return tool, arguments
    defined = app.tools.get(tool)
    if defined is not None and defined.exposition == "flat":
        return defined.flat_name(action), arguments
    if DISCRIMINATOR in arguments:
        raise TypeError("pass the action positionally, not also as action=")
    found = defined.get(action) if defined is not None else None
    if defined is not None and found is not None:
        tool = defined.listed_name(found)  # a split tool's half
    return tool, {DISCRIMINATOR: action, **arguments}
