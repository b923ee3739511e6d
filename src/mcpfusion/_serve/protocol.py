"""What a server needs from an app: the ``ServableApp`` Protocol every serving path reads."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from mcpfusion._identity import Identity
from mcpfusion._present.response import ToolResponse
from mcpfusion._tools.client import ClientChannel
from mcpfusion._tools.context import Progress
from mcpfusion._tools.dialects import Dialect

__all__ = ["ServableApp"]


class ServableApp(Protocol):
    """What a server needs from an app; ``mcpfusion.Fusion`` is one."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def instructions(self) -> str | None: ...

    @property
    def local_identity(self) -> Identity | None: ...

    @property
    def toggled(self) -> bool:
        """Whether a tool was enabled or disabled at run time: the hot paths then leave
        ``tools/list`` to the SDK's path, which lists per tenant."""
        ...

    def list_tools(
        self,
        scopes: Collection[str] | None = None,
        *,
        tenant: str | None = None,
        dialect: Dialect | None = None,
    ) -> list[dict[str, Any]]: ...

    def sends_user_ui(self, client: str | None) -> bool:
        """Whether answers to the client named ``client`` keep the blocks for the user."""
        ...

    def dialect_for(self, client: str | None) -> Dialect:
        """The schema dialect of the client whose ``clientInfo.name`` is ``client``."""
        ...

    def scope_key(self, identity: Identity | None) -> frozenset[str] | None: ...

    def running(self) -> AbstractAsyncContextManager[Any]: ...

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: Progress | None = None,
        meta: Mapping[str, Any] | None = None,
        identity: Identity | None = None,
        client: ClientChannel | None = None,
    ) -> ToolResponse: ...
