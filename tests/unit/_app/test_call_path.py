"""The in-process call path's shortcuts keep what a call observes: contexts, requests, values."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest
from pydantic import BaseModel

from mcpfusion import (
    Context,
    Fusion,
    Identity,
    Presenter,
    Request,
    ResponseView,
    ToolResponse,
    response,
    success,
    view_of,
)
from mcpfusion.middleware import Call, Next, rate_limit
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio


class Row(BaseModel):
    """A presented row."""

    id: int


def presenter(**callbacks: Any) -> Presenter:
    """A Presenter of ``Row`` with the given callbacks registered."""
    view = Presenter("Row", Row)
    for kind, fn in callbacks.items():
        getattr(view, kind)(fn)
    return view


def test_a_presenter_knows_whether_a_callback_reads_the_context() -> None:
    """``uses_context``: a ``(data, ctx)`` callback, its own or a child's, reads it."""
    assert not presenter(rules=lambda row: "one argument").uses_context
    assert presenter(rules=lambda row, ctx: ctx.action).uses_context
    child = presenter(suggest=lambda row, ctx: None)
    parent = presenter(rules=lambda row: "r").embed("child", child)
    assert parent.uses_context


async def test_a_callback_taking_the_context_gets_the_call_s_own() -> None:
    """A handler without a context still gives a ``(data, ctx)`` callback the call's context."""
    app = Fusion("rows")
    view = presenter(rules=lambda row, ctx: f"read by {ctx.identity.subject} in {ctx.action}")
    app.tool("rows").action("get", returns=view)(lambda: {"id": 1})
    result = await FusionTester(app, identity=Identity("ada")).call("rows", "get")
    assert result.system_rules == ("read by ada in get",)


async def test_a_child_s_callback_taking_the_context_gets_it() -> None:
    """An embedded Presenter's ``(data, ctx)`` callback is reached with the context too."""
    app = Fusion("rows")
    child = presenter(rules=lambda row, ctx: f"child of {ctx.tool}")
    view = presenter().embed("child", child)
    app.tool("rows").action("get", returns=view)(lambda: {"id": 1, "child": {"id": 2}})
    result = await FusionTester(app).call("rows", "get")
    assert result.system_rules == ("child of rows",)


async def test_an_app_s_context_factory_runs_for_every_call() -> None:
    """A factory of the app's own runs even when nothing of the call reads its product."""
    made: list[str] = []

    def factory(request: Request) -> Context:
        made.append(request.action)
        return Context(request)

    app = Fusion("rows", context=factory)

    @app.tool("rows").action
    async def ping() -> str:
        return "pong"

    assert (await app.call_tool("rows", {"action": "ping"})).blocks == ("pong",)
    assert made == ["ping"]


async def test_a_middleware_reads_the_request_before_and_after_changing_the_caller() -> None:
    """``call.request`` follows the call's identity and values as a middleware changes them."""
    app = Fusion("rows")
    seen: list[tuple[str | None, dict[str, Any]]] = []

    @app.middleware
    async def switch(call: Call, call_next: Next) -> ToolResponse:
        before = call.request
        seen.append((before.identity.subject if before.identity else None, dict(before.values)))
        call.identity = Identity("bob")
        call.values["via"] = "switch"
        after = call.request
        seen.append((after.identity.subject if after.identity else None, dict(after.values)))
        assert after.cancelled is before.cancelled  # one call, one cancellation
        return await call_next(call)

    @app.tool("rows").action
    async def who(ctx: Context) -> dict[str, Any]:
        subject = ctx.identity.subject if ctx.identity else None
        return {"subject": subject, "values": dict(ctx.values)}

    result = await FusionTester(app, identity=Identity("ada")).call("rows", "who")
    assert seen == [("ada", {}), ("bob", {"via": "switch"})]
    assert result.data == {"subject": "bob", "values": {"via": "switch"}}


class _CountingStore:
    """A store that answers asynchronously, as a shared one does."""

    def __init__(self) -> None:
        self.taken = 0

    async def take(self, key: str, rate: float, burst: int) -> float:
        self.taken += 1
        return 0.0 if self.taken <= burst else 3.2


async def test_a_rate_limit_on_an_asynchronous_store_lets_calls_through_then_refuses() -> None:
    """The step for stores that answer later passes the burst, then refuses with its wait."""
    app = Fusion("rows")
    store = _CountingStore()
    app.middleware(rate_limit(1, 2, store=store))

    @app.tool("rows").action
    async def ping() -> str:
        return "pong"

    tester = FusionTester(app)
    results = [await tester.call("rows", "ping") for _ in range(3)]
    assert [r.data for r in results[:2]] == ["pong", "pong"]
    assert results[2].error_code == "RATE_LIMITED"
    assert results[2].error is not None and results[2].error.retry_after == 4
    assert store.taken == 3


@pytest.mark.parametrize(
    "made",
    [
        pytest.param(lambda: success({"a": 1}), id="plain"),
        pytest.param(
            lambda: response({"a": 1}).rule("r").suggest("t.x", "why").build(), id="built"
        ),
    ],
)
def test_a_rendered_response_is_an_ordinary_value(made: Any) -> None:
    """Responses and views made without their checks compare, hash, copy and pickle as usual."""
    sent = made()
    by_hand = ToolResponse(sent.blocks)
    assert sent == by_hand and hash(sent) == hash(by_hand)
    assert pickle.loads(pickle.dumps(sent)) == sent
    assert copy.copy(sent) == sent
    assert dataclasses.replace(sent, is_error=True).is_error
    view = view_of(sent)
    assert view is not None and view == dataclasses.replace(view)
    assert view == ResponseView(**{f.name: getattr(view, f.name) for f in dataclasses.fields(view)})
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign"):
        setattr(sent, "blocks", ())  # noqa: B010 - what a user's code would try
