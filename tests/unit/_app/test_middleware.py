"""Middleware: order, short-circuit, context derivation, rate limit, timeouts and tracing."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel

from mcpfusion import Context, DefinitionError, Fusion, Identity, Presenter, ToolError, ToolResponse
from mcpfusion.middleware import (
    Call,
    MemoryRateLimitStore,
    Next,
    audit_log,
    rate_limit,
    tracing,
)
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio

ALICE = Identity("alice", scopes={"notes:read"}, claims={"org": "acme"})


class Note(BaseModel):
    """A presented note."""

    id: int


def notes_app() -> Fusion:
    """A tool whose handler reports what it sees."""
    app = Fusion("notes", data_format="json", ui_audience="all", definitions="full")
    notes = app.tool("notes", description="Notes.")

    @notes.action(requires={"notes:read"}, loggable=["note_id"])
    async def read(note_id: int, ctx: Context) -> dict[str, Any]:
        """Read a note."""
        who = ctx.identity
        return {"tenant": who.tenant if who else None, "values": dict(ctx.values)}

    @notes.action(returns=Presenter("Note", Note))
    async def show() -> dict[str, int]:
        """Show a note."""
        return {"id": 1}

    return app


async def test_middleware_runs_in_order_around_the_call() -> None:
    """The first added runs first and last: an onion around the handler."""
    app = notes_app()
    seen: list[str] = []

    @app.middleware
    async def outer(call: Call, call_next: Next) -> ToolResponse:
        seen.append("outer in")
        response = await call_next(call)
        seen.append("outer out")
        return response

    @app.middleware
    async def inner(call: Call, call_next: Next) -> ToolResponse:
        seen.append(f"inner in {call.tool}/{call.action} {dict(call.arguments)}")
        response = await call_next(call)
        seen.append("inner out")
        return response

    result = await FusionTester(app, identity=ALICE).call("notes", "read", note_id=3)
    assert not result.is_error
    assert seen == ["outer in", "inner in notes/read {'note_id': 3}", "inner out", "outer out"]


async def test_a_tool_error_short_circuits_and_outer_middleware_sees_the_result() -> None:
    """Raising ToolError stops the call; the handler never runs; outer layers see a response."""
    app = notes_app()
    codes: list[bool] = []

    @app.middleware
    async def observe(call: Call, call_next: Next) -> ToolResponse:
        response = await call_next(call)
        codes.append(response.is_error)
        return response

    @app.middleware
    async def closed(call: Call, call_next: Next) -> ToolResponse:
        raise ToolError("MAINTENANCE", "Notes are read-only tonight.")

    result = await FusionTester(app, identity=ALICE).call("notes", "read", note_id=3)
    assert result.error_code == "MAINTENANCE" and codes == [True]


async def test_middleware_derives_the_tenant_and_adds_values() -> None:
    """A middleware changes the identity (the tenant) and adds values the handler reads."""
    app = notes_app()

    @app.middleware
    async def tenant(call: Call, call_next: Next) -> ToolResponse:
        assert call.identity is not None
        call.identity = call.identity.with_tenant(call.identity.claims["org"])
        call.values["request_id"] = "r-1"
        return await call_next(call)

    result = await FusionTester(app, identity=ALICE).call("notes", "read", note_id=3)
    assert result.data == {"tenant": "acme", "values": {"request_id": "r-1"}}


async def test_refused_calls_pass_through_middleware_without_arguments() -> None:
    """A FORBIDDEN call reaches the middleware (rejected, no arguments); its handler never runs."""
    app = notes_app()
    calls: list[tuple[bool, dict[str, Any]]] = []

    @app.middleware
    async def record(call: Call, call_next: Next) -> ToolResponse:
        calls.append((call.rejected, dict(call.arguments)))
        return await call_next(call)

    result = await FusionTester(app).call("notes", "read", note_id=3)
    assert result.error_code == "FORBIDDEN" and calls == [(True, {})]


async def test_a_middleware_that_returns_no_response_is_an_internal_error() -> None:
    """A middleware returning something other than a ToolResponse fails the call, not the app."""
    app = notes_app()

    @app.middleware
    async def broken(call: Call, call_next: Next) -> Any:
        return "oops"

    result = await FusionTester(app, identity=ALICE).call("notes", "read", note_id=3)
    assert result.error_code == "INTERNAL_ERROR"


def test_middleware_must_be_async_with_two_arguments() -> None:
    """A sync function or a wrong signature fails where it is added."""
    app = notes_app()
    with pytest.raises(DefinitionError, match="is an async function"):
        app.middleware(lambda call, call_next: None)  # type: ignore[arg-type,return-value]

    async def one(call: Call) -> ToolResponse:
        raise AssertionError

    with pytest.raises(DefinitionError, match="takes two arguments"):
        app.middleware(one)  # type: ignore[arg-type]


def test_middleware_cannot_be_added_once_served() -> None:
    """The chain is composed when the catalog is built: adding later raises."""
    app = notes_app()
    app.freeze()

    async def late(call: Call, call_next: Next) -> ToolResponse:
        return await call_next(call)

    with pytest.raises(DefinitionError, match="is frozen"):
        app.middleware(late)


async def test_rate_limit_refuses_past_the_burst_with_retry_after() -> None:
    """A token bucket per identity: the burst passes, the next call is RATE_LIMITED."""
    now = [0.0]
    app = notes_app()
    app.middleware(rate_limit(0.5, 2, store=MemoryRateLimitStore(clock=lambda: now[0])))
    alice = FusionTester(app, identity=ALICE)
    bob = alice.as_caller(Identity("bob", scopes={"notes:read"}))
    first, second, third = [await alice.call("notes", "read", note_id=1) for _ in range(3)]
    assert not first.is_error and not second.is_error
    assert third.error_code == "RATE_LIMITED"
    assert third.error is not None and third.error.retry_after == 2
    assert not (await bob.call("notes", "read", note_id=1)).is_error  # bob has his own bucket
    now[0] = 2.0  # one token back
    assert not (await alice.call("notes", "read", note_id=1)).is_error


class _BrokenStore:
    """A shared store that is down."""

    async def take(self, key: str, rate: float, burst: int) -> float:
        raise ConnectionError("store unreachable at 10.0.0.7")


async def test_a_failing_rate_limit_store_fails_the_call_without_details(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A store that raises refuses the call as an internal error; the handler never runs."""
    app = notes_app()
    app.middleware(rate_limit(1, 1, store=_BrokenStore()))
    with caplog.at_level(logging.ERROR, logger="mcpfusion"):
        result = await FusionTester(app, identity=ALICE).call("notes", "read", note_id=1)
    assert result.error_code == "INTERNAL_ERROR"
    assert "10.0.0.7" not in result.text
    assert any("10.0.0.7" in (r.exc_text or "") for r in caplog.records)


def test_rate_limit_options_are_checked() -> None:
    """A rate or burst that is not positive fails at once."""
    with pytest.raises(DefinitionError, match="rate is a positive number"):
        rate_limit(0, 1)
    with pytest.raises(DefinitionError, match="burst is a whole number"):
        rate_limit(1, 0)


async def test_timeout_cancels_the_handler_and_answers_timeout() -> None:
    """An async handler past its timeout= is cancelled; the agent reads TIMEOUT."""
    app = Fusion("slow", data_format="json", ui_audience="all", definitions="full")
    cancelled = anyio.Event()

    @app.tool("jobs").action(timeout=0.05)
    async def run() -> str:
        """A job that never ends."""
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    with anyio.fail_after(5):
        result = await FusionTester(app).call("jobs", "run")
    assert result.error_code == "TIMEOUT" and cancelled.is_set()
    assert "did not finish within 0.05 seconds" in result.text


def test_timeout_must_be_positive() -> None:
    """timeout= is a positive number of seconds."""
    app = Fusion("slow", data_format="json", ui_audience="all", definitions="full")
    with pytest.raises(DefinitionError, match="timeout is a positive number"):

        @app.tool("jobs").action(timeout=0)
        async def run() -> str:
            """A job."""
            return "done"


async def test_audit_log_writes_one_record_per_call(caplog: pytest.LogCaptureFixture) -> None:
    """Who, what, outcome, code, duration, and loggable arguments only."""
    app = notes_app()
    app.middleware(audit_log())
    tester = FusionTester(app, identity=ALICE)
    with caplog.at_level(logging.INFO, logger="mcpfusion.audit"):
        await tester.call("notes", "read", note_id=7)
        await tester.call("notes", "read", note_id="x")
    first, second = (r.audit for r in caplog.records)  # type: ignore[attr-defined]
    assert {k: first[k] for k in ("subject", "tool", "action", "outcome", "code")} == {
        "subject": "alice",
        "tool": "notes",
        "action": "read",
        "outcome": "ok",
        "code": None,
    }
    assert first["arguments"] == {"note_id": 7}
    assert (second["outcome"], second["code"], second["arguments"]) == (
        "refused",
        "VALIDATION_ERROR",
        {},
    )
    assert caplog.records[0].getMessage().startswith("alice called notes/read: ok in ")


async def test_a_failing_audit_record_is_logged_and_the_result_still_goes_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A filter raising on the audit logger is reported; the caller gets its answer."""
    audit = logging.getLogger("test.audit.broken")

    def broken(record: logging.LogRecord) -> bool:
        raise RuntimeError("filter down")

    audit.addFilter(broken)
    app = notes_app()
    app.middleware(audit_log(audit, level=logging.WARNING))
    with caplog.at_level(logging.ERROR, logger="mcpfusion"):
        result = await FusionTester(app, identity=ALICE).call("notes", "read", note_id=7)
    assert not result.is_error and '"tenant": null' in result.text
    assert [r.getMessage() for r in caplog.records] == ["the audit record of notes/read failed"]


def test_loggable_names_a_parameter() -> None:
    """loggable= may only name the action's parameters."""
    app = Fusion("a", data_format="json", ui_audience="all", definitions="full")
    with pytest.raises(DefinitionError, match="loggable names 'secret'"):

        @app.tool("t").action(loggable=["secret"])
        async def act(x: int) -> int:
            """Act."""
            return x


async def test_tracing_opens_a_span_per_call_and_one_for_the_render() -> None:
    """OpenTelemetry: a span per call (tool, action, outcome) with the Presenter's as a child."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = notes_app()
    app.middleware(tracing(provider))
    tester = FusionTester(app, identity=ALICE)
    await tester.call("notes", "show")
    await tester.as_caller(None).call("notes", "read", note_id=1)
    render, shown, refused = exporter.get_finished_spans()
    assert (shown.name, render.name) == ("notes/show", "present")
    assert render.parent is not None and render.parent.span_id == shown.context.span_id
    assert shown.attributes is not None and refused.attributes is not None
    assert dict(shown.attributes) == {
        "mcpfusion.tool": "notes",
        "mcpfusion.action": "show",
        "mcpfusion.outcome": "ok",
    }
    assert refused.attributes["mcpfusion.outcome"] == "refused"
    assert refused.attributes["mcpfusion.error_code"] == "FORBIDDEN"
