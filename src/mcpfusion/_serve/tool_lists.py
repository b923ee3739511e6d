"""The one ``tools/list`` cache of a server, shared by the SDK's path and both hot paths."""

from __future__ import annotations

from typing import Any

from mcp import types
from mcp.types import methods

from mcpfusion._identity import Identity
from mcpfusion._serve.jsonrpc import RequestId, encode
from mcpfusion._serve.paging import page, page_size_of
from mcpfusion._serve.protocol import ServableApp
from mcpfusion._tools.dialects import Dialect

__all__ = ["ToolLists", "paged"]

_Viewer = tuple[frozenset[str] | None, str | None, Dialect]


class ToolLists:
    """Each caller's ``tools/list`` result, made once per (scope key, tenant, schema
    dialect of its client) and shared.

    ``None`` scopes are the caller who may call everything. The SDK's path answers with
    the model (``result``); the hot paths with its bytes at a protocol version
    (``line``), shaped by the SDK's per-version sieve once per version. ``clear`` empties
    both when the catalog changes at run time. With the app's ``page_size``, a result is
    one page of the caller's list (``page``), the hot paths' bytes its first page.

    Reading the complete list here, when the server is built, is what makes a definition
    mistake only that list shows (a tool without actions) raise ``DefinitionError``
    before the server accepts a client.
    """

    def __init__(self, app: ServableApp) -> None:
        self._app = app
        self.everything = [types.Tool.model_validate(tool) for tool in app.list_tools()]
        """Every tool, as the developer defined them (read when the server is built)."""
        self._results: dict[_Viewer, types.ListToolsResult] = {
            (None, None, "mcp"): types.ListToolsResult(tools=self.everything)
        }
        self._encoded: dict[tuple[frozenset[str] | None, str | None, Dialect, str], bytes] = {}
        self.page_size = page_size_of(app)
        """How many tools a page lists; ``None`` (the default): one page lists them all."""

    def result(
        self, identity: Identity | None, client: str | None = None, cursor: str | None = None
    ) -> types.ListToolsResult:
        """The page ``cursor`` names (the first without one) of what ``identity`` is shown:
        the tools and actions its scopes and tenant allow, in the schema dialect of its
        client (``client`` is its ``clientInfo.name``).

        Raises:
            MCPError: -32602 for a cursor that names no page of that list.
        """
        found = self._whole(identity, client)
        if self.page_size is None and cursor is None:
            return found
        return paged(found.tools, cursor, self.page_size)

    def _whole(self, identity: Identity | None, client: str | None) -> types.ListToolsResult:
        """Every tool ``identity`` is shown, made once per scope key, tenant and dialect."""
        dialect = self._app.dialect_for(client)
        tenant = identity.tenant if identity is not None else None
        key = (self._app.scope_key(identity), tenant, dialect)
        found = self._results.get(key)
        if found is None:
            listed = self._app.list_tools(key[0], tenant=tenant, dialect=dialect)
            shown = [types.Tool.model_validate(tool) for tool in listed]
            found = self._results[key] = types.ListToolsResult(tools=shown)
        return found

    def line(
        self,
        request_id: RequestId,
        identity: Identity | None,
        version: str,
        client: str | None = None,
    ) -> bytes:
        """The JSON-RPC answer to ``tools/list`` for ``identity`` (through ``client``) at
        ``version``, as the SDK sends it (same keys, same order)."""
        scopes = self._app.scope_key(identity)
        tenant = identity.tenant if identity is not None else None
        key = (scopes, tenant, self._app.dialect_for(client), version)
        listed = self._encoded.get(key)
        if listed is None:
            dumped: dict[str, Any] = self.result(identity, client).model_dump(
                by_alias=True, mode="json", exclude_none=True
            )
            result = methods.serialize_server_result("tools/list", version, dumped)
            listed = self._encoded[key] = encode(result)
        return b'{"jsonrpc":"2.0","id":' + encode(request_id) + b',"result":' + listed + b"}"

    def clear(self) -> None:
        """Forgets every result made: the catalog changed at run time."""
        self._results.clear()
        self._encoded.clear()


def paged(tools: list[types.Tool], cursor: str | None, size: int | None) -> types.ListToolsResult:
    """The page of ``tools`` that ``cursor`` names, with the next page's cursor.

    Raises:
        MCPError: -32602 for a cursor that names no page of ``tools``.
    """
    shown, following = page(tools, _name, cursor, size)
    return types.ListToolsResult(tools=list(shown), next_cursor=following)


def _name(tool: types.Tool) -> str:
    return tool.name
