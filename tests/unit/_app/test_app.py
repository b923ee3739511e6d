"""Unit tests of mcpfusion._app.app: tools, routing, context factories, progress, cancellation."""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from mcpfusion import DefinitionError, ToolError
from mcpfusion._app.app import Fusion
from mcpfusion._present.presenter import Presenter
from mcpfusion._tools.context import Context, Request

pytestmark = pytest.mark.anyio


class Session:
    """An app context that is not a Context."""

    def __init__(self, user: str, request: Request) -> None:
        self.user = user
        self.request = request


def make_session(request: Request) -> Session:
    """A factory declaring its product type, so handlers can ask for a Session."""
    return Session(str(request.meta.get("user", "anonymous")), request)


class TenantContext(Context):
    """A Context subclass used as the factory itself."""

    def __init__(self, request: Request) -> None:
        super().__init__(request)
        self.tenant = "acme"


class Row(BaseModel):
    """A presented row."""

    id: int


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"name": ""}, "non-empty name"),
        ({"name": "a", "version": ""}, "version"),
        ({"name": "a", "instructions": 3}, "instructions"),
        ({"name": "a", "context": "nope"}, "callable factory"),
    ],
)
def test_bad_app_options(options: dict[str, Any], message: str) -> None:
    """Bad app options raise at definition time."""
    with pytest.raises(DefinitionError, match=message):
        Fusion(**options)


def test_seam_attributes() -> None:
    """The adapter reads name, version and instructions."""
    app = Fusion("srv", version="2.0", instructions="Be brief.")
    assert (app.name, app.version, app.instructions) == ("srv", "2.0", "Be brief.")
    assert repr(app) == "Fusion('srv', tools=[])"


def test_duplicate_tool_name() -> None:
    """A second tool with a used name raises."""
    app = Fusion("srv")
    app.tool("t")
    with pytest.raises(DefinitionError, match="already has a tool 't'"):
        app.tool("t")


def test_flat_action_colliding_with_a_listed_name() -> None:
    """A flat action listed under a name another tool holds raises when it is defined."""
    app = Fusion("srv")
    app.tool("crm_find").action("a")(lambda: None)
    crm = app.tool("crm", exposition="flat")
    with pytest.raises(DefinitionError, match="'crm_find' is already listed by tool 'crm_find'"):
        crm.action("find")(lambda: None)
    crm.action("search")(lambda: None)
    assert [t["name"] for t in app.list_tools()] == ["crm_find", "crm_search"]


def test_grouped_tool_colliding_with_a_flat_action() -> None:
    """A grouped tool named like an existing flat action raises when it is created."""
    app = Fusion("srv")
    app.tool("crm", exposition="flat").action("find")(lambda: None)
    with pytest.raises(DefinitionError, match=r"rename one .*\{tool\}\{separator\}\{action\}"):
        app.tool("crm_find")
    assert list(app.tools) == ["crm"]


def test_flat_actions_of_two_tools_colliding() -> None:
    """Two flat tools whose actions end up with one listed name cannot both be defined."""
    app = Fusion("srv")
    app.tool("a", exposition="flat").action("b_c")(lambda: None)
    with pytest.raises(DefinitionError, match="'a_b_c' is already listed by tool 'a'"):
        app.tool("a_b", exposition="flat").action("c")(lambda: None)


@pytest.mark.parametrize(
    ("define", "problem"),
    [
        (lambda app: app.tool("broken"), "tool 'broken' has no actions"),
        (
            lambda app: app.tool("broken").enable_select().action("a")(lambda: None),
            "tool 'broken': enable_select()",
        ),
    ],
    ids=["empty", "nothing-to-select"],
)
async def test_an_incomplete_tool_never_breaks_the_others(define: Any, problem: str) -> None:
    """An incomplete tool is not routable and fails the listing; other tools still answer."""
    app = Fusion("srv")
    app.tool("ok").action("a")(lambda: "fine")
    define(app)
    assert (await app.call_tool("ok", {"action": "a"})).blocks == ("fine",)
    missing = await app.call_tool("broken", {"action": "a"})
    assert 'code="UNKNOWN_TOOL"' in missing.blocks[0]
    assert "<action>ok</action>" in missing.blocks[0]
    with pytest.raises(DefinitionError, match=re.escape(problem)):
        app.list_tools()


def test_list_tools_returns_copies() -> None:
    """Mutating the listed dicts cannot change what the next listing shows."""
    app = Fusion("srv")
    app.tool("t").action("a")(lambda: None)
    app.list_tools()[0]["name"] = "changed"
    assert app.list_tools()[0]["name"] == "t"


async def test_adding_an_action_after_listing_is_seen() -> None:
    """Tools defined after a listing appear in the next one and can be called."""
    app = Fusion("srv")
    tool = app.tool("t")
    tool.action("a")(lambda: "a")
    assert len(app.list_tools()) == 1
    app.tool("u").action("b")(lambda: "b")
    assert [t["name"] for t in app.list_tools()] == ["t", "u"]
    assert (await app.call_tool("u", {"action": "b"})).blocks == ("b",)


async def test_flat_tools_route_by_name() -> None:
    """A flat tool's actions are called by their listed names, without `action`."""
    app = Fusion("srv")
    app.tool("crm", exposition="flat").action("find")(lambda email: email)
    assert (await app.call_tool("crm_find", {"email": "a@b"})).blocks == ("a@b",)


async def test_default_context_and_meta() -> None:
    """Without a factory, handlers get a Context carrying the request metadata."""
    app = Fusion("srv")
    app.tool("t").action("who")(_who)
    result = await app.call_tool("t", {"action": "who"}, meta={"user": "ada"})
    assert result.blocks == ("t/who by ada",)


def _who(ctx: Context) -> str:
    return f"{ctx.tool}/{ctx.action} by {ctx.meta['user']}"


async def test_factory_returning_its_own_type() -> None:
    """A factory's declared return type is injected where handlers ask for it."""
    app = Fusion("srv", context=make_session)
    app.tool("t").action("who")(_session_user)
    result = await app.call_tool("t", {"action": "who"}, meta={"user": "ada"})
    assert result.blocks == ("ada via t",)


def _session_user(session: Session, ctx: Context) -> str:
    return f"{session.user} via {ctx.tool}"


async def test_context_subclass_as_factory() -> None:
    """A Context subclass can be the factory; `ctx: Context` receives the subclass."""
    app = Fusion("srv", context=TenantContext)
    app.tool("t").action("tenant")(_tenant)
    assert (await app.call_tool("t", {"action": "tenant"})).blocks == ("acme",)


def _tenant(ctx: Context) -> str:
    assert isinstance(ctx, TenantContext)
    return ctx.tenant


async def test_async_factory_is_awaited() -> None:
    """A factory may be async."""

    async def factory(request: Request) -> TenantContext:
        return TenantContext(request)

    app = Fusion("srv", context=factory)
    app.tool("t").action("tenant")(_tenant)
    assert (await app.call_tool("t", {"action": "tenant"})).blocks == ("acme",)


async def test_per_call_factory_overrides_the_app() -> None:
    """call_tool(context=...) replaces the factory for one call."""
    app = Fusion("srv", context=make_session)
    app.tool("t").action("who")(_session_user)

    def fake(request: Request) -> Session:
        return Session("fake", request)

    assert (await app.call_tool("t", {"action": "who"}, context=fake)).blocks == ("fake via t",)


async def test_factory_errors() -> None:
    """A ToolError from the factory is its envelope; anything else is INTERNAL_ERROR."""

    def deny(request: Request) -> Context:
        raise ToolError("FORBIDDEN", "Not allowed.")

    def crash(request: Request) -> Context:
        raise RuntimeError("db down")

    for factory, code in ((deny, "FORBIDDEN"), (crash, "INTERNAL_ERROR")):
        app = Fusion("srv", context=factory)
        app.tool("t").action("a")(lambda: None)
        result = await app.call_tool("t", {"action": "a"})
        assert f'code="{code}"' in result.blocks[0]
        assert "db down" not in result.blocks[0]


async def test_factory_runs_only_for_valid_calls() -> None:
    """The context is built after validation: an invalid call never runs the factory."""
    calls: list[Request] = []
    app = Fusion("srv", context=lambda request: calls.append(request))
    app.tool("t").action("a")(lambda x: None)
    await app.call_tool("t", {"action": "a"})
    assert calls == []


async def test_presenter_callbacks_receive_the_context() -> None:
    """The context reaches Presenter callbacks."""
    view = Presenter("Row", Row)

    @view.rules
    def _tenant_rule(row: Any, ctx: TenantContext) -> str:
        return f"Tenant {ctx.tenant}."

    app = Fusion("srv", context=TenantContext)
    app.tool("t").action("a", returns=view)(lambda: {"id": 1})
    result = await app.call_tool("t", {"action": "a"})
    assert result.blocks[-1] == "<domain_rules>\n- Tenant acme.\n</domain_rules>"


async def test_progress_is_reported_in_order() -> None:
    """ctx.progress reports reach the call's progress receiver, in order."""
    seen: list[tuple[float, float | None, str | None]] = []

    async def receive(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    app = Fusion("srv")
    app.tool("t").action("work")(_work)
    result = await app.call_tool("t", {"action": "work", "steps": 3}, progress=receive)
    assert result.blocks == ("done",)
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def _work(steps: int, ctx: Context) -> str:
    for step in range(1, steps + 1):
        await ctx.progress(step, steps, f"step {step}")
    return "done"


async def test_cancellation_reaches_the_handler_and_propagates() -> None:
    """Cancelling a call cancels the async handler; no error result is produced."""
    started = anyio.Event()
    cancelled = anyio.Event()
    results: list[Any] = []

    async def wait_forever() -> None:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()

    app = Fusion("srv")
    app.tool("t").action("wait")(wait_forever)

    async def call() -> None:
        results.append(await app.call_tool("t", {"action": "wait"}))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await started.wait()
            group.cancel_scope.cancel()
        await cancelled.wait()
    assert results == []


async def test_cancelling_a_sync_handler_does_not_wait_for_it() -> None:
    """A cancelled call returns at once; the sync handler's thread ends on its own."""
    # How soon the call returns is a bound of benchmarks/bounds.py; this test checks that it
    # returns while the handler still blocks, which no wait for the thread could do.
    release = threading.Event()
    finished = threading.Event()

    def slow() -> None:
        release.wait(timeout=10)
        finished.set()

    app = Fusion("srv")
    app.tool("t").action("slow")(slow)
    try:
        with anyio.move_on_after(0.1) as scope:
            await app.call_tool("t", {"action": "slow"})
        assert scope.cancelled_caught
        assert not finished.is_set()
    finally:
        release.set()  # lets the abandoned worker thread finish now
    assert finished.wait(timeout=10)


async def test_cancelled_error_is_not_an_error_result() -> None:
    """asyncio.CancelledError escaping a handler propagates out of call_tool."""

    async def cancelled() -> None:
        raise asyncio.CancelledError

    app = Fusion("srv")
    app.tool("t").action("c")(cancelled)
    with pytest.raises(asyncio.CancelledError, match=r"^$"):  # raised bare, as asyncio does
        await app.call_tool("t", {"action": "c"})


async def test_none_arguments_are_empty() -> None:
    """A call without arguments is a call with {}."""
    app = Fusion("srv")
    app.tool("t", exposition="flat").action("a")(lambda: "ok")
    assert (await app.call_tool("t_a", None)).blocks == ("ok",)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"cursor_secret": "short"}, "app 'x': cursor_secret needs at least 32 bytes"),
        ({"cursor_ttl": 0}, "app 'x': cursor_ttl is a positive number of seconds"),
    ],
)
def test_cursor_options_are_checked_where_the_app_is_defined(
    options: dict[str, Any], message: str
) -> None:
    """A short cursor secret or a bad cursor ttl fails where the app is defined."""
    with pytest.raises(DefinitionError, match=message):
        Fusion("x", **options)
