"""Identity, scopes per action, the per-caller views of tools/list, lifespan and state."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from mcpfusion import Context, DefinitionError, Fusion, Identity, Presenter
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio

READER = Identity("reader", scopes={"billing:read"})
WRITER = Identity("writer", scopes={"billing:read", "billing:write"})


class Invoice(BaseModel):
    """An invoice."""

    id: str
    status: str


def billing_app() -> Fusion:
    """A grouped tool whose write actions need billing:write, and a flat admin tool."""
    app = Fusion("billing", data_format="json", ui_audience="all", definitions="full")
    view = Presenter("Invoice", Invoice)
    billing = app.tool("billing", description="Invoices.", requires={"billing:read"})
    billing.enable_select()

    @billing.action(returns=view, read_only=True)
    async def get(invoice_id: str) -> dict[str, str]:
        """One invoice."""
        return {"id": invoice_id, "status": "paid"}

    @billing.action(requires={"billing:read", "billing:write"}, destructive=True)
    async def void(invoice_id: str, reason: str) -> str:
        """Void an invoice."""
        return "voided"

    admin = app.tool("admin", exposition="flat", requires={"admin"})

    @admin.action
    async def purge() -> str:
        """Purge everything."""
        return "purged"

    return app


def test_identity_is_a_frozen_checked_value() -> None:
    """Scopes become a frozenset; a str of scopes or a bad field is refused; claims read-only."""
    who = Identity("u", scopes=["a", "b"], claims={"iss": "x"}, tenant="t")
    assert who.scopes == frozenset({"a", "b"}) and who.has({"a"}) and not who.has({"c"})
    assert who.with_tenant("u2").tenant == "u2" and who.tenant == "t"
    with pytest.raises(TypeError, match="not a str"):
        Identity("u", scopes="a b")
    with pytest.raises(TypeError, match="non-empty str"):
        Identity("")
    with pytest.raises(TypeError, match="does not support item assignment"):
        who.claims["iss"] = "y"  # type: ignore[index]


async def test_each_caller_lists_only_the_actions_it_may_call() -> None:
    """A tool's schema, description, _select and annotations follow what the caller sees."""
    app = billing_app()
    reader = FusionTester(app, identity=READER).list_tools()
    writer = FusionTester(app, identity=WRITER).list_tools()
    anonymous = FusionTester(app).list_tools()
    assert [t["name"] for t in reader] == ["billing"] == [t["name"] for t in writer]
    assert anonymous == []
    (read_view,), (write_view,) = reader, writer
    assert read_view["inputSchema"]["properties"]["action"]["enum"] == ["get"]
    assert "reason" not in read_view["inputSchema"]["properties"]
    assert "void" not in read_view["description"]
    assert read_view["annotations"]["readOnlyHint"] is True
    assert write_view["annotations"]["destructiveHint"] is True
    assert read_view["inputSchema"]["properties"]["_select"]["items"]["enum"] == ["id", "status"]
    assert (
        app.list_tools()
        == FusionTester(
            app, identity=Identity("root", scopes={"billing:read", "billing:write", "admin"})
        ).list_tools()
    )


def test_views_are_made_once_per_set_of_scopes_that_matters() -> None:
    """Scopes no action requires do not make new views; the same set gets the same view."""
    app = billing_app()
    catalog = app._frozen()
    first = catalog.view(frozenset({"billing:read", "unrelated"}))
    assert catalog.view(frozenset({"billing:read"})) is first
    assert app.scope_key(Identity("x", scopes={"billing:read", "other"})) == frozenset(
        {"billing:read"}
    )
    everyone = Identity("root", scopes={"billing:read", "billing:write", "admin"})
    assert app.scope_key(everyone) is None


async def test_a_hidden_action_called_anyway_is_forbidden() -> None:
    """FORBIDDEN names the missing scopes only, before any validation of the arguments."""
    app = billing_app()
    result = await FusionTester(app, identity=READER).call("billing", "void")
    assert result.error_code == "FORBIDDEN"
    assert result.error is not None
    assert result.error.message == (
        "This call needs the scope 'billing:write', which the caller does not have."
    )
    flat = await FusionTester(app).call("admin_purge")
    assert flat.error is not None and "'admin'" in flat.error.message


async def test_routing_errors_list_only_what_the_caller_sees() -> None:
    """UNKNOWN_ACTION and UNKNOWN_TOOL offer only the caller's actions and tools."""
    app = billing_app()
    tester = FusionTester(app, identity=READER)
    unknown = await tester.call("billing", "nope")
    assert unknown.error is not None and unknown.error.available_actions == ("get",)
    missing = await tester.call_tool("bill", {})
    assert missing.error is not None and missing.error.available_actions == ("billing",)


def test_requires_is_a_set_of_scope_names() -> None:
    """requires= takes a collection of non-empty str, not one str."""
    app = Fusion("a", data_format="json", ui_audience="all", definitions="full")
    with pytest.raises(DefinitionError, match="requires is a set of scope names"):
        app.tool("t", requires="admin")
    tool = app.tool("u")
    with pytest.raises(DefinitionError, match="requires is a set of scope names"):
        tool.action("act", requires="admin")(lambda: None)


@dataclass
class State:
    """The app's state: a fake pool and what happened to it."""

    events: list[str]


def lifespan_app(events: list[str]) -> Fusion:
    """An app whose lifespan opens and closes a fake pool."""

    @asynccontextmanager
    async def lifespan(app: Fusion) -> AsyncIterator[State]:
        events.append("start")
        try:
            yield State(events)
        finally:
            events.append("stop")

    app = Fusion(
        "pool", data_format="json", ui_audience="all", definitions="full", lifespan=lifespan
    )
    tool = app.tool("db")

    @tool.action
    async def by_type(state: State) -> int:
        """Reads the state by annotation."""
        return len(state.events)

    @tool.action
    async def by_context(ctx: Context) -> bool:
        """Reads the state through the context."""
        return isinstance(ctx.state, State)

    return app


async def test_the_tester_runs_the_lifespan_once_and_injects_the_state() -> None:
    """async with FusionTester(app): started once however many enter; state by type and ctx."""
    events: list[str] = []
    app = lifespan_app(events)
    assert app.state_type is State
    async with FusionTester(app) as tester, FusionTester(app) as other:
        assert (await tester.call("db", "by_type")).data == 1
        assert (await other.call("db", "by_context")).data is True
        assert events == ["start"]
    assert events == ["start", "stop"]


async def test_state_outside_the_lifespan_is_an_internal_error() -> None:
    """A call needing the state while the lifespan is not running fails, with a clear log."""
    app = lifespan_app([])
    result = await FusionTester(app).call("db", "by_type")
    assert result.error_code == "INTERNAL_ERROR"


async def test_a_failing_startup_shuts_down_what_started() -> None:
    """The lifespan's own cleanup runs when serving fails to start after it."""
    events: list[str] = []
    app = lifespan_app(events)
    with pytest.raises(RuntimeError, match="port taken"):
        async with app.running():
            raise RuntimeError("port taken")
    assert events == ["start", "stop"]


def test_lifespan_must_be_callable() -> None:
    """lifespan= is a callable (app) -> async context manager."""
    with pytest.raises(DefinitionError, match="lifespan must be callable"):
        Fusion("a", data_format="json", ui_audience="all", definitions="full", lifespan="nope")  # type: ignore[arg-type]


async def test_an_app_without_lifespan_has_no_state() -> None:
    """ctx.state is None without a lifespan."""
    app = Fusion("plain", data_format="json", ui_audience="all", definitions="full")

    @app.tool("t").action
    async def read(ctx: Context) -> Any:
        """Reads the state."""
        return ctx.state

    assert (await FusionTester(app).call("t", "read")).data is None
