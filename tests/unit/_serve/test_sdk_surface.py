"""Resources, prompts and completions through the SDK, as a client receives them."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from pydantic import BaseModel

from mcpfusion import Context, Fusion, Image, Presenter, ToolError, user
from mcpfusion._serve.sdk import hub_of
from mcpfusion._serve.sdk_client import ClientHub
from mcpfusion._serve.sdk_surface import surface_handlers
from mcpfusion.server import build_server

pytestmark = pytest.mark.anyio


class Row(BaseModel):
    """What a reader may see of a row."""

    id: int


def make_app() -> Fusion:
    """An app with a tool, a fixed and a templated resource, a prompt and a completer."""
    app = Fusion("surface", data_format="json", ui_audience="all", definitions="full")
    app.tool("t").action("a")(lambda: "ok")
    app.resource("x://fixed", mime_type="text/plain")(lambda: "fixed")

    @app.resource("x://rows/{id}", returns=Presenter("Row", Row))
    def row(id: int) -> dict[str, Any]:
        if id == 0:
            raise ToolError("NOT_FOUND", "Row 0 does not exist.")
        if id == 9:
            raise RuntimeError("boom")
        return {"id": id, "hidden": "h"}

    @row.complete("id")
    def ids(value: str) -> list[str]:
        return [n for n in ("1", "12", "2") if n.startswith(value)]

    @app.prompt()
    def hello(name: str) -> list[Any]:
        """Says hello."""
        return [user(f"Hello {name}"), user(Image(b"1"))]

    return app


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_client_lists_reads_gets_and_completes(mode: str) -> None:
    """Both protocol eras: capabilities, lists with cache hints, a presented read, a prompt."""
    with anyio.fail_after(10):
        async with Client(build_server(make_app()), mode=mode) as client:
            caps = client.server_capabilities
            assert caps is not None
            assert caps.resources and caps.prompts and caps.completions
            listed = await client.list_resources()
            assert [str(r.uri) for r in listed.resources] == ["x://fixed"]
            templates = await client.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == ["x://rows/{id}"]
            read = await client.read_resource("x://rows/3")
            first = read.contents[0]
            assert isinstance(first, types.TextResourceContents)
            assert (first.text, first.mime_type) == ('{\n  "id": 3\n}', "application/json")
            prompt = await client.get_prompt("hello", {"name": "Ann"})
            assert [m.content.type for m in prompt.messages] == ["text", "image"]
            ref = types.ResourceTemplateReference(uri="x://rows/{id}")
            done = await client.complete(ref, {"name": "id", "value": "1"})
            assert done.completion.values == ["1", "12"]


async def test_reads_and_lists_carry_cache_hints() -> None:
    """Lists are public and fresh for no time; a plain read is public too (SEP-2549)."""
    async with Client(build_server(make_app())) as client:
        listed = await client.list_prompts()
        assert (listed.ttl_ms, listed.cache_scope) == (0, "public")
        read = await client.read_resource("x://fixed")
        assert (read.ttl_ms, read.cache_scope) == (0, "public")


async def test_errors_are_json_rpc_errors_with_the_uri() -> None:
    """Unknown URI, bad variable, NOT_FOUND: -32602 with data.uri; a crash: -32603."""
    async with Client(build_server(make_app())) as client:
        cases = {
            "y://none": "Resource not found",
            "x://rows/x": "id: Input should be a valid integer",
            "x://rows/0": "Row 0 does not exist",
        }
        for uri, message in cases.items():
            with pytest.raises(MCPError, match=message) as caught:
                await client.read_resource(uri)
            assert (caught.value.code, caught.value.data) == (-32602, {"uri": uri})
        with pytest.raises(MCPError, match="failed with an internal error") as crash:
            await client.read_resource("x://rows/9")
        assert crash.value.code == -32603 and "boom" not in crash.value.message
        with pytest.raises(MCPError, match="name: Field required") as bad:
            await client.get_prompt("hello", {})
        assert bad.value.code == -32602


async def test_subscribers_hear_of_updates_until_they_unsubscribe() -> None:
    """resources/subscribe (2025-11-25) registers the connection with the server's hub; a
    state change covering the URI reaches it once, and not after it unsubscribes."""
    app = make_app()
    server = build_server(app)
    hub = hub_of(server)
    assert hub is not None
    heard: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            heard.append(str(message.params.uri))

    with anyio.fail_after(10):
        async with Client(server, mode="legacy", message_handler=on_message) as client:
            caps = client.server_capabilities
            assert caps is not None and caps.resources and caps.resources.subscribe
            with pytest.warns(MCPDeprecationWarning, match="resources/subscribe is removed"):
                await client.subscribe_resource("x://rows/1")
            await hub.invalidated(["x.rows"], None)  # covers x://rows/1 only: subscribed
            await hub.invalidated(["x.fixed"], None)
            with pytest.warns(MCPDeprecationWarning, match="resources/unsubscribe is removed"):
                await client.unsubscribe_resource("x://rows/1")
            await hub.invalidated(["x.rows"], None)
            await client.list_tools()  # a round trip: the notification has arrived by now
            with (
                pytest.warns(MCPDeprecationWarning, match="resources/subscribe is removed"),
                pytest.raises(MCPError, match="Resource not found"),
            ):
                await client.subscribe_resource("y://none")
    assert heard == ["x://rows/1"]


async def test_an_app_without_resources_or_prompts_advertises_neither() -> None:
    """Tools only: no resources, prompts or completions capability."""
    app = Fusion("tools-only", data_format="json", ui_audience="all", definitions="full")
    app.tool("t").action("a")(lambda: "ok")
    assert surface_handlers(app, ClientHub(InMemorySubscriptionBus(), lambda ctx: None)) == {}
    async with Client(build_server(app)) as client:
        caps = client.server_capabilities
        assert caps is not None
        assert caps.resources is None and caps.prompts is None and caps.completions is None


class Topic(BaseModel):
    """What a prompt asks the user for."""

    topic: str


def asking_app() -> Fusion:
    """A prompt and a resource whose handlers ask the user before answering."""
    app = Fusion("asking", data_format="json", ui_audience="all", definitions="full")

    @app.prompt()
    async def brief(ctx: Context) -> str:
        """Asks what to brief on."""
        answer = await ctx.elicit("Which topic?", Topic, key="topic")
        return f"Brief me on {answer.data.topic if answer.accepted else answer.action}."

    @app.resource("x://asked", mime_type="text/plain")
    async def asked(ctx: Context) -> str:
        answer = await ctx.elicit("Which topic?", Topic)
        return f"read {answer.data.topic if answer.accepted else answer.action}"

    return app


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (types.ElicitResult(action="accept", content={"topic": "rent"}), "rent"),
        (types.ElicitResult(action="decline"), "decline"),
    ],
)
async def test_prompts_and_resources_ask_the_client_in_both_eras(
    mode: str, answer: types.ElicitResult, said: str
) -> None:
    """ctx.elicit in a prompt or a resource: mid-call on 2025-11-25, a round on 2026-07-28."""
    asked: list[str] = []

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return answer

    with anyio.fail_after(10):
        async with Client(
            build_server(asking_app()), mode=mode, elicitation_callback=on_elicit
        ) as client:
            prompt = await client.get_prompt("brief")
            read = await client.read_resource("x://asked")
    assert prompt.messages[0].content.text == f"Brief me on {said}."  # type: ignore[union-attr]
    assert read.contents[0].text == f"read {said}"  # type: ignore[union-attr]
    assert asked == ["Which topic?", "Which topic?"]


async def test_a_prompt_question_is_an_input_required_round() -> None:
    """On 2026-07-28 prompts/get answers input_required, then the messages when answered."""
    with anyio.fail_after(10):
        async with Client(
            build_server(asking_app()), mode="2026-07-28", elicitation_callback=_accept
        ) as client:
            first = await client.session.get_prompt("brief", allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult)
            assert list(first.input_requests or {}) == ["topic"]
            answer = types.ElicitResult(action="accept", content={"topic": "tax"})
            second = await client.session.get_prompt(
                "brief",
                input_responses={"topic": answer},
                request_state=first.request_state,
                allow_input_required=True,
            )
    assert isinstance(second, types.GetPromptResult)
    assert second.messages[0].content.text == "Brief me on tax."  # type: ignore[union-attr]


async def test_a_prompt_that_cannot_ask_fails_readably() -> None:
    """A client without elicitation gets a JSON-RPC error naming it, not a traceback."""
    with anyio.fail_after(10):
        async with Client(build_server(asking_app()), mode="legacy") as client:
            with pytest.raises(MCPError, match="elicitation") as caught:
                await client.get_prompt("brief")
    assert caught.value.code == -32603


async def _accept(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"topic": "x"})
