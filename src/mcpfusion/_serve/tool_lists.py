"""The one ``tools/list`` cache of a server, shared by the SDK's path and both hot paths."""

from __future__ import annotations

from typing import Any

from mcp import types
from mcp.types import methods

from mcpfusion._identity import Identity
from mcpfusion._serve.jsonrpc import RequestId, encode
from mcpfusion._serve.protocol import ServableApp
from mcpfusion._tools.dialects import Dialect

__all__ = ["ToolLists"]

_Viewer = tuple[frozenset[str] | None, str | None, Dialect]


class ToolLists:
    """Each caller's ``tools/list`` result, made once per (scope key, tenant, schema
    dialect of its client) and shared.

    ``None`` scopes are the caller who may call everything. The SDK's path answers with
    the model (``result``); the hot paths with its bytes at a protocol version
    (``line``), shaped by the SDK's per-version sieve once per version. ``clear`` empties
    both when the catalog changes at run time.

    Reading the complete list here, when the server is built, is what makes a definition
    mistake only that list shows (a tool without actions) raise ``DefinitionError``
    before the server accepts a client.
    """

    def __init__(self, app: ServableApp) -> None:
        self._app = app
        self.everything = [types.Tool.model_validate(tool) for tool in app.list_tools()]
        """Every tool, as the developer defined them (read when the server is built)."""
        self._results: dict[_Viewer, types.ListToolsResult] = {}
        self._encoded: dict[tuple[frozenset[str] | None, str | None, Dialect, str], bytes] = {}

    def result(self, identity: Identity | None, client: str | None = None) -> types.ListToolsResult:
        """What ``identity`` is shown: the tools and actions its scopes and tenant allow, in
        the schema dialect of its client (``client`` is its ``clientInfo.name``)."""
        dialect = self._app.dialect_for(client)
        tenant = identity.tenant if identity is not None else None
        key = (self._app.scope_key(identity), tenant, dialect)
        found = self._results.get(key)
        if found is None:
            if key == (None, None, "mcp"):
                shown = self.everything
            else:
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
