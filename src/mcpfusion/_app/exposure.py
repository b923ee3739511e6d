"""Progressive exposure: a catalog tool lists the rest, each caller sees the tools it asked for."""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Annotated, Any, Final, Literal, Protocol

from pydantic import BaseModel, Field

from mcpfusion._errors import DefinitionError, ToolError
from mcpfusion._identity import Identity
from mcpfusion._present.presenter import Presenter
from mcpfusion._tools.caller_state import DEFAULT_TTL, RESERVED_PREFIX, caller_state_of
from mcpfusion._tools.context import Context
from mcpfusion._tools.tool import Tool

Exposure = Literal["all", "progressive"]
"""What ``tools/list`` shows: every tool, or the catalog tool and what each caller asked for."""

EXPOSURES: Final = ("all", "progressive")

CATALOG_TOOL: Final = "tool_catalog"
"""The name of the catalog tool a progressive app lists."""

FOUND_LIMIT: Final = 20
"""The most definitions one search sends."""

NAMES_LIMIT: Final = 50
"""The most names one ``use`` takes (each of at most 200 characters)."""

_FIELD: Final = f"{RESERVED_PREFIX}exposed"
_WORD = re.compile(r"\w+")

logger = logging.getLogger("mcpfusion")

Words = Annotated[str, Field(max_length=500)]
Names = Annotated[
    list[Annotated[str, Field(max_length=200)]], Field(min_length=1, max_length=NAMES_LIMIT)
]


class ToolSummary(BaseModel):
    """One listed tool in the catalog's overview: its name and first line."""

    name: str
    summary: str


class ToolDefinition(BaseModel):
    """One listed tool's definition as ``tools/list`` would show it, for the model to call."""

    name: str
    description: str
    input_schema: dict[str, Any]


# TOON's table suits a list of names; a schema nests, which compact JSON carries best.
summary_view = Presenter("ToolSummary", ToolSummary)
definition_view = Presenter(
    "ToolDefinition",
    ToolDefinition,
    data_format="compact",
    rules=[f"Call one by name, or {CATALOG_TOOL} use to list it for this conversation."],
)


class Host(Protocol):
    """What the catalog tool reads of its app (``Fusion``, which imports this module)."""

    def tool(self, name: str, *, description: str = "") -> Tool: ...

    def list_tools(
        self, scopes: Collection[str] | None = None, *, tenant: str | None = None
    ) -> list[dict[str, Any]]: ...

    def scope_key(self, identity: Identity | None) -> frozenset[str] | None: ...

    async def _catalog_changed(self, tenant: str | None) -> None: ...


class Progressive:
    """Each caller's exposed tools (its caller state) and the catalog tool that grows them.

    ``tools/list`` shows the catalog tool, the tools named ``always`` and those the caller
    asked for (``use``) or called: a tool that is not listed yet is still callable, and
    calling it lists it. Exposure saves tokens; it grants nothing (scopes, tenants and a
    workflow still decide what a caller may call).
    """

    def __init__(self, app_name: str, always: Collection[str]) -> None:
        if isinstance(always, str) or not all(isinstance(n, str) for n in always):
            raise DefinitionError(f"app '{app_name}': always_listed is a collection of tool names")
        self.app_name = app_name
        self.always = frozenset(always) | {CATALOG_TOOL}

    def check(self, listed: Collection[str]) -> None:
        """Checks ``always`` against the app's listed names.

        Raises:
            DefinitionError: naming an entry that lists no tool, and the listed names.
        """
        unknown = sorted(self.always - set(listed))
        if unknown:
            raise DefinitionError(
                f"app '{self.app_name}': always_listed names {', '.join(map(repr, unknown))}, "
                f"which no tool lists; listed: {', '.join(sorted(listed))}"
            )

    async def exposed(self, identity: Identity | None, meta: Mapping[str, Any]) -> set[str]:
        """The names the caller asked for so far (beyond those always listed)."""
        stored = await caller_state_of(identity, meta).get(_FIELD)
        # Stored data is data like any other: anything but a list of names is none.
        if not isinstance(stored, list):
            return set()
        return {name for name in stored if isinstance(name, str)}

    async def expose(
        self, names: Iterable[str], identity: Identity | None, meta: Mapping[str, Any]
    ) -> bool:
        """Lists ``names`` for the caller from now on; whether its list changed."""
        exposed = await self.exposed(identity, meta)
        added = set(names) - exposed - self.always
        if not added:
            return False
        await caller_state_of(identity, meta)._put(_FIELD, sorted(exposed | added), DEFAULT_TTL)
        return True

    async def called(self, name: str, identity: Identity | None, meta: Mapping[str, Any]) -> bool:
        """Lists the tool ``name`` the caller is calling; whether its list changed.

        The call is answered either way: if the caller's state cannot be read or written
        now (its store is down), the failure is logged and the tool stays unlisted.
        """
        try:
            return await self.expose((name,), identity, meta)
        except Exception:
            logger.warning("listing '%s' for its caller failed", name, exc_info=True)
            return False

    def shown(
        self, listed: Sequence[dict[str, Any]], exposed: Collection[str]
    ) -> list[dict[str, Any]]:
        """The definitions of ``listed`` a caller who asked for ``exposed`` is shown."""
        return [t for t in listed if t["name"] in self.always or t["name"] in exposed]

    def define(self, app: Host) -> None:
        """Defines the catalog tool on ``app``: ``browse``, ``search`` and ``use``."""
        catalog = app.tool(
            CATALOG_TOOL,
            description="Every tool of this server: browse or search them, then use some.",
        )

        def visible(ctx: Context) -> list[dict[str, Any]]:
            identity = ctx.identity
            tenant = identity.tenant if identity is not None else None
            listed = app.list_tools(app.scope_key(identity), tenant=tenant)
            return [t for t in listed if t["name"] != CATALOG_TOOL]

        @catalog.action(returns=summary_view, read_only=True)
        def browse(ctx: Context) -> list[dict[str, str]]:
            """Name and first line of every tool."""
            return [
                {"name": t["name"], "summary": t.get("description", "").split("\n", 1)[0]}
                for t in visible(ctx)
            ]

        @catalog.action(returns=definition_view, read_only=True)
        def search(ctx: Context, words: Words, limit: int = 5) -> list[dict[str, Any]]:
            """Definitions of the tools matching the most words."""
            # Words of one or two letters ("a", "to", "of") would match nearly every tool.
            wanted = {word for word in _words(words) if len(word) > 2}
            scored = []
            for index, tool in enumerate(visible(ctx)):
                score = _score(wanted, tool)
                if score:
                    scored.append((-score, index, tool))
            found = [tool for _, _, tool in sorted(scored, key=lambda s: s[:2])]
            return [_definition(t) for t in found[: max(1, min(limit, FOUND_LIMIT))]]

        @catalog.action(idempotent=True)
        async def use(ctx: Context, names: Names) -> str:
            """List these tools from now on (their names, from browse or search)."""
            known = {t["name"] for t in visible(ctx)}
            unknown = [n for n in names if n not in known]
            if unknown:
                raise ToolError(
                    "UNKNOWN_TOOL",
                    f"No tool named {', '.join(map(repr, unknown))}.",
                    recovery=f"Call {CATALOG_TOOL} browse or search for the names.",
                )
            if await self.expose(names, ctx.identity, ctx.meta):
                await app._catalog_changed(ctx.identity.tenant if ctx.identity else None)
            return f"Listed: {', '.join(names)}."


def _score(wanted: set[str], tool: Mapping[str, Any]) -> int:
    """How many of ``wanted`` a tool mentions; a word of its name counts twice."""
    name = _words(tool["name"])
    text = _words(str(tool.get("description", "")))
    return sum(2 if word in name else 1 for word in wanted if word in name or word in text)


def _words(text: str) -> set[str]:
    """The lower-case words of ``text``; ``list_invoices`` is two of them."""
    return set(_WORD.findall(text.lower().replace("_", " ")))


def _definition(tool: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a listed definition the model needs to call it."""
    return {
        "name": tool["name"],
        "description": tool.get("description", ""),
        "input_schema": tool.get("inputSchema", {}),
    }
