"""One request pipeline: resource reads, prompts and completions pass through the
middleware, timeouts and suggestion checks exactly as tool calls do."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from mcpfusion import (
    Fusion,
    Identity,
    Presenter,
    Suggestion,
    ToolError,
    error,
    messages_from_view,
    success,
)
from mcpfusion._surface.outcome import SurfaceError
from mcpfusion.middleware import Call, Next, audit_log, rate_limit
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio

ALICE = Identity("alice", scopes={"mcp"})
KINDS = ["tools/call", "resources/read", "prompts/get", "completion/complete"]


class Item(BaseModel):
    id: str


def _app(*, slow: bool = False, timeout: float | None = None) -> Fusion:
    """One tool, one resource template, one prompt and a completer, all alike."""
    app = Fusion("shelf")

    async def wait() -> None:
        if slow:
            await anyio.sleep(30)

    @app.tool("items").action(read_only=True, timeout=timeout)
    async def get(id: str) -> str:
        """One item."""
        await wait()
        return f"item {id}"

    @app.resource("shelf://items/{id}", timeout=timeout)
    async def item(id: str) -> str:
        """One item, by URI."""
        await wait()
        if id == "missing":
            raise ToolError("NOT_FOUND", f"No item {id}.")
        return f"item {id}"

    @item.complete("id")
    async def ids(value: str) -> list[str]:
        await wait()
        return [i for i in ("a1", "a2", "b1") if i.startswith(value)]

    @app.prompt(timeout=timeout)
    async def describe(id: str) -> str:
        """Describe an item."""
        await wait()
        return f"Describe item {id}."

    return app


async def _each_kind(tester: FusionTester) -> list[Any]:
    """One request of each kind; what each answered, or the ``SurfaceError`` it raised."""
    answers: list[Any] = [await tester.call("items", "get", id="a1")]
    for request in (
        lambda: tester.read_resource("shelf://items/a1"),
        lambda: tester.get_prompt("describe", id="a1"),
        lambda: tester.complete("shelf://items/{id}", "id", "a"),
    ):
        try:
            answers.append(await request())
        except SurfaceError as exc:
            answers.append(exc)
    return answers


async def test_middleware_sees_every_kind_of_request() -> None:
    """A middleware sees tool calls, resource reads, prompts and completions, and can
    tell them apart by ``call.kind``."""
    app = _app()
    seen: list[tuple[str, str, str, dict[str, Any]]] = []

    @app.middleware
    async def record(call: Call, call_next: Next) -> Any:
        seen.append((call.kind, call.tool, call.action, dict(call.arguments)))
        return await call_next(call)

    answers = await _each_kind(FusionTester(app))
    assert not any(isinstance(answer, SurfaceError) for answer in answers)
    assert seen == [
        ("tools/call", "items", "get", {"id": "a1"}),
        ("resources/read", "item", "read", {"id": "a1"}),
        ("prompts/get", "describe", "get", {"id": "a1"}),
        ("completion/complete", "item", "complete", {"value": "a"}),
    ]


async def test_rate_limit_counts_every_kind_of_request_in_one_bucket() -> None:
    """A caller's bucket is spent by any request; past it, a tool call gets RATE_LIMITED
    and a resource read, a prompt or a completion the same refusal as a JSON-RPC error."""
    app = _app()
    app.middleware(rate_limit(rate=0.001, burst=4))
    tester = FusionTester(app, identity=ALICE)
    allowed = await _each_kind(tester)
    refused = await _each_kind(tester)
    assert not any(isinstance(answer, SurfaceError) for answer in allowed)
    assert refused[0].is_error and refused[0].error.code == "RATE_LIMITED"
    for answer in refused[1:]:
        assert isinstance(answer, SurfaceError)
        assert answer.kind == "failed"
        assert answer.message.startswith("Too many calls in a short time.")
        assert "Retry after" in answer.message


async def test_audit_log_records_every_kind_of_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One audit record per request of each kind, with its kind, name, step and outcome;
    a resource's ToolError and a prompt's invalid arguments are recorded as for a tool."""
    app = _app()
    app.middleware(audit_log())
    tester = FusionTester(app, identity=ALICE)
    with caplog.at_level(logging.INFO, logger="mcpfusion.audit"):
        await _each_kind(tester)
        with pytest.raises(SurfaceError, match="No item missing"):
            await tester.read_resource("shelf://items/missing")
        with pytest.raises(SurfaceError, match="Invalid arguments for prompt 'describe'"):
            await tester.get_prompt("describe")
    records = [record.audit for record in caplog.records]  # type: ignore[attr-defined]
    fields = [(r["kind"], r["tool"], r["action"], r["outcome"], r["code"]) for r in records]
    assert fields == [
        ("tools/call", "items", "get", "ok", None),
        ("resources/read", "item", "read", "ok", None),
        ("prompts/get", "describe", "get", "ok", None),
        ("completion/complete", "item", "complete", "ok", None),
        ("resources/read", "item", "read", "error", "NOT_FOUND"),
        ("prompts/get", "describe", "get", "refused", "VALIDATION_ERROR"),
    ]
    assert all(r["subject"] == "alice" for r in records)


async def test_timeout_stops_every_kind_of_request(caplog: pytest.LogCaptureFixture) -> None:
    """A handler past its ``timeout=`` is stopped: a tool call gets TIMEOUT, a resource
    read, a prompt and a completion a JSON-RPC error saying what did not finish; the
    audit log records TIMEOUT for each."""
    app = _app(slow=True, timeout=0.05)
    app.middleware(audit_log())
    with caplog.at_level(logging.INFO, logger="mcpfusion.audit"), anyio.fail_after(20):
        answers = await _each_kind(FusionTester(app))
    assert answers[0].error.code == "TIMEOUT"
    assert [str(answer) for answer in answers[1:]] == [
        'The resource "shelf://items/a1" did not finish within 0.05 seconds and was stopped.',
        "The prompt 'describe' did not finish within 0.05 seconds and was stopped.",
        'The completion of "id" did not finish within 0.05 seconds and was stopped.',
    ]
    codes = [(r.audit["kind"], r.audit["code"]) for r in caplog.records]  # type: ignore[attr-defined]
    assert codes == [(kind, "TIMEOUT") for kind in KINDS]


async def test_a_middleware_answering_a_resource_read_itself_fails_it_readably() -> None:
    """A middleware's own error response is the error the client reads; a success of its
    own, which holds no resource, is refused as an internal error."""
    app = _app()

    @app.middleware
    async def gate(call: Call, call_next: Next) -> Any:
        if call.kind == "resources/read":
            return error("Reads are closed today.", "CLOSED")
        if call.kind == "prompts/get":
            return success("not a prompt")
        return await call_next(call)

    tester = FusionTester(app)
    with pytest.raises(SurfaceError, match=r"^Reads are closed today\.$"):
        await tester.read_resource("shelf://items/a1")
    with pytest.raises(SurfaceError, match=r"^The prompt 'describe' failed with an internal"):
        await tester.get_prompt("describe", id="a1")


def _tracker() -> Fusion:
    """A split tool whose Presenter suggests a write action, through a resource and a
    prompt too; one suggestion names nothing."""
    app = Fusion("tracker")
    issue_view = Presenter("Issue", Item, suggestions=[Suggestion("issues.close", "Close it")])

    @issue_view.suggest
    def dynamic(item: dict[str, Any]) -> Suggestion:
        return Suggestion("issues.nope", "Nothing")

    issues = app.tool("issues", exposition="split")

    @issues.action(returns=issue_view, read_only=True)
    def get(id: str) -> dict[str, str]:
        """One issue."""
        return {"id": id}

    @issues.action(destructive=True)
    def close(id: str) -> str:
        """Close an issue."""
        return f"closed {id}"

    @app.resource("tracker://issues/{id}", returns=issue_view)
    def issue(id: str) -> dict[str, str]:
        """One issue, by URI."""
        return {"id": id}

    @app.prompt()
    def triage(id: str) -> Any:
        """Triage an issue."""
        return messages_from_view(issue_view, {"id": id})

    return app


async def test_suggestions_in_resources_and_prompts_are_checked_as_in_tool_results(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A resource read and a prompt send a Presenter's suggestions as a tool call does:
    spelled as listed (``issues_write.close``), one naming nothing dropped."""
    tester = FusionTester(_tracker())
    with caplog.at_level(logging.WARNING, logger="mcpfusion"):
        tool = (await tester.call("issues", "get", id="7")).text
        read = await tester.read_resource("tracker://issues/7")
        prompt = await tester.get_prompt("triage", id="7")
    texts = [
        tool,
        "\n\n".join(c["text"] for c in read.contents),
        "\n\n".join(m.to_mcp()["content"]["text"] for m in prompt.messages),
    ]
    for text in texts:
        assert "- issues_write.close: Close it" in text
        assert "issues.nope" not in text
        assert "issues.close" not in text
    assert texts[1] == texts[0]


# -- the Pipeline object: built with the catalog, its steps, the Call it makes ---------------


def _notes() -> Fusion:
    """One grouped tool and one flat tool, each with one action."""
    app = Fusion("notes")
    app.tool("notes").action("read", requires={"notes:read"}, timeout=5.0, loggable=["id"])(
        lambda id: f"note {id}"
    )
    app.tool("misc", exposition="flat").action("ping")(lambda: "pong")
    return app


async def test_the_pipeline_is_built_with_the_catalog_and_dropped_by_a_definition() -> None:
    """One pipeline per catalog: reads reuse it, a new middleware drops it, the next read
    builds one whose chain runs that middleware."""
    app = _notes()
    assert app._pipeline is None
    app.list_tools()
    built = app._pipeline
    assert built is not None and built.catalog is app._catalog
    await app.call_tool("misc_ping", {})
    assert app._pipeline is built
    seen: list[str] = []

    async def record(call: Call, call_next: Next) -> Any:
        seen.append(call.tool)
        return await call_next(call)

    app.middleware(record)
    assert app._pipeline is None
    assert (await app.call_tool("misc_ping", {})).blocks == ("pong",)
    assert app._pipeline is not built and seen == ["misc"]


async def test_the_call_carries_the_action_s_options_to_middleware() -> None:
    """A middleware reads the scopes, timeout and loggable names of the action it wraps."""
    app = _notes()
    seen: list[tuple[Any, ...]] = []

    async def record(call: Call, call_next: Next) -> Any:
        seen.append((call.requires, call.timeout, call.loggable, call.arguments))
        return await call_next(call)

    app.middleware(record)
    identity = Identity("ann", scopes={"notes:read"})
    result = await app.call_tool("notes", {"action": "read", "id": "7"}, identity=identity)
    assert result.blocks == ("note 7",)
    assert seen == [(frozenset({"notes:read"}), 5.0, ("id",), {"id": "7"})]


def test_a_call_made_outside_the_pipeline_names_no_action_options() -> None:
    """A Call a middleware's own test makes needs no action: no scopes, timeout or names."""
    call = Call("t", "a", {}, ALICE, {}, None, None, None, None)
    assert (call.requires, call.timeout, call.loggable, call.rejected) == (
        frozenset(),
        None,
        (),
        False,
    )


async def test_a_tool_disabled_after_the_pipeline_is_built_is_unknown_to_calls() -> None:
    """The pipeline reads the app's toggles at call time: a disabled tool is UNKNOWN_TOOL
    and is left out of the tools the error offers."""
    app = _notes()
    app.freeze()
    tester = FusionTester(app, identity=Identity("ann", scopes={"notes:read"}))
    assert (await app.call_tool("misc_ping", {})).blocks == ("pong",)
    await app.tools["misc"].disable()
    missing = await tester.call_tool("misc_ping", {})
    assert missing.error_code == "UNKNOWN_TOOL"
    assert missing.error is not None and missing.error.available_actions == ("notes",)
    await app.tools["misc"].enable()
    assert (await app.call_tool("misc_ping", {})).blocks == ("pong",)
