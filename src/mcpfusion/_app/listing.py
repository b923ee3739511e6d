"""What callers see of the app: tools/list by scope and tenant, state names, run-time changes."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, Literal

from mcpfusion._errors import DefinitionError
from mcpfusion._identity import Identity, scopes_of
from mcpfusion._present.statesync import unmatched
from mcpfusion._surface.surface import Surface
from mcpfusion._surface.ui_app import emits_ui, point_tools
from mcpfusion._tools.catalog import Catalog
from mcpfusion._tools.dialects import Dialect, in_dialect
from mcpfusion._tools.tool import Tool

logger = logging.getLogger("mcpfusion")

Listed = Literal["tools", "prompts"]
"""A list that can change at run time."""

Announcer = Callable[[str | None, Listed], Awaitable[None]]
"""Told that a list (tools, prompts) of a tenant's callers (or everyone's, ``None``)
changed."""


class Listings:
    """``Fusion``'s lists over its catalog, and the run-time changes to them.

    A base class of ``Fusion`` only: it reads the tools, the catalog (``_frozen``) and
    the announcers, which ``Fusion`` sets up.
    """

    name: str
    surface: Surface
    ui_app_uri: str | None
    toggled: bool
    schema_dialect: Dialect | None
    _tools: Mapping[str, Tool]
    _listed: Mapping[str, Tool]
    _announcers: list[Announcer]
    _frozen: Callable[[], Catalog]

    def state_names(self) -> list[str]:
        """Every state name the app serves (SPEC §15): ``{tool}.{action}`` per action, and
        ``{scheme}.{name}`` per resource."""
        names = [a.state_name for tool in self._tools.values() for a in tool.actions.values()]
        return names + [r.state_name for r in self.surface.resources.values()]

    def _check_invalidations(self) -> None:
        """SPEC §15: every ``invalidates`` pattern names some state the app serves.

        Raises:
            DefinitionError: naming the action, its patterns that match nothing, and the
                known state names.
        """
        names = self.state_names()
        for tool in self._tools.values():
            for action in tool.actions.values():
                missing = unmatched(action.invalidates, names)
                if missing:
                    raise DefinitionError(
                        f"{action.tool}/{action.name}: invalidates {', '.join(map(repr, missing))}"
                        f", which matches no state of app '{self.name}'; state names: "
                        f"{', '.join(names)}"
                    )

    def scope_key(self, identity: Identity | None) -> frozenset[str] | None:
        """The scopes of ``identity`` that change what it may call, ``None`` if it may call all.

        A key for caching what each caller sees: ``list_tools(scope_key(identity))`` is
        the caller's ``tools/list``.
        """
        catalog = self._frozen()
        key = scopes_of(identity) & catalog.scopes
        # With a Presenter per caller, holding every scope still picks one view of several.
        return None if key == catalog.scopes and not catalog.per_caller else key

    def announce_changes(self, announcer: Announcer) -> None:
        """Registers ``announcer(tenant, listed)``, awaited when a tool (``listed`` is
        ``"tools"``) or a prompt (``"prompts"``) is enabled or disabled, for ``tenant``'s
        callers (everyone's when ``None``); the server adapter tells the clients."""
        self._announcers.append(announcer)

    async def _catalog_changed(self, tenant: str | None, listed: Listed = "tools") -> None:
        if listed == "tools":
            self.toggled = True
        for announcer in list(self._announcers):
            try:
                await announcer(tenant, listed)
            except Exception:
                logger.warning("announcing a catalog change failed", exc_info=True)

    def _shown(self, listed: Sequence[dict[str, Any]], tenant: str | None) -> list[dict[str, Any]]:
        """The tool definitions ``tenant``'s callers see: those of enabled tools."""
        return [t for t in listed if self._listed[t["name"]].enabled_for(tenant)]

    def list_tools(
        self,
        scopes: Collection[str] | None = None,
        *,
        tenant: str | None = None,
        dialect: Dialect | None = None,
    ) -> list[dict[str, Any]]:
        """Exactly the MCP ``Tool`` objects of ``tools/list``, as JSON-compatible dicts.

        Args:
            scopes: the caller's scopes: only the actions they allow are listed (a tool
                with none disappears). ``None`` lists everything, as the developer sees it.
            tenant: the tenant the caller acts for: a tool disabled for it (or, for
                ``None``, for everyone) is left out (``Tool.disable``).
            dialect: whose rules the input schemas follow (``_dialects``); ``None``:
                the app's ``schema_dialect``, else MCP's JSON Schema as written.

        Raises:
            DefinitionError: if a tool is incomplete (no actions, or nothing for
                ``_select`` to pick). The server lists the tools when it is built, so such
                a server refuses to start; ``call_tool`` simply routes around an
                incomplete tool.
        """
        catalog = self._frozen()
        listed = catalog.list_tools(None if scopes is None else frozenset(scopes))
        tools = self._shown(listed, tenant) if self.toggled else listed
        if self.ui_app_uri is not None:
            point_tools(tools, self._shows_ui, self.ui_app_uri)
        dialect = dialect or self.schema_dialect
        if dialect is not None and dialect != "mcp":
            tools = [in_dialect(tool, dialect) for tool in tools]
        return tools

    def _shows_ui(self, listed: str) -> bool:
        """Whether an action the listed tool leads to has a Presenter that can send UI."""
        route = self._frozen().routes[listed]  # a flat route's actions hold its one action
        # A selector's Presenters are known per call only: it may send UI.
        return any(
            any(map(emits_ui, a.presenters)) or (a.views is not None and not a.presenters)
            for a in route.actions.values()
        )
