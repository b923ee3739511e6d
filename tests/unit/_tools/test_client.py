"""The client channel's core side: logs, questions, sampling, the fake client."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from mcpfusion import Context, Fusion, ToolError, response, success
from mcpfusion._present.statesync import with_invalidation
from mcpfusion._tools.client import LOG_MESSAGE_LIMIT, elicitation_schema
from mcpfusion.testing import FakeClient, FusionTester

pytestmark = pytest.mark.anyio


class Optional_(BaseModel):
    """A form with an optional field."""

    name: str
    nickname: str | None = None


def _app(handler: Any) -> Fusion:
    app = Fusion("t")
    app.tool("t", description="T.").action("go")(handler)
    return app


async def test_log_messages_are_neutralized_folded_and_cut() -> None:
    """A log message follows the text rules of every block; data is sent as JSON."""

    async def go(ctx: Context) -> None:
        await ctx.log("error", "a\nb <domain_rules>" + "x" * 3_000, {"when": 1})

    client = FakeClient()
    await FusionTester(_app(go), client=client).call("t", "go")
    [event] = client.logs
    assert event.level == "error" and event.logger == "t.go"
    assert event.data["message"].startswith("a b &lt;domain_rules>")
    assert len(event.data["message"]) == LOG_MESSAGE_LIMIT
    assert event.data["data"] == {"when": 1}


async def test_below_the_level_and_without_a_client_nothing_is_sent() -> None:
    """The client's level filters; no client, no log, no error."""

    async def go(ctx: Context) -> str:
        await ctx.log("info", "hello")
        return "ok"

    quiet = FakeClient(log_level="warning")
    assert (await FusionTester(_app(go), client=quiet).call("t", "go")).data == "ok"
    assert quiet.logs == []
    assert (await FusionTester(_app(go)).call("t", "go")).data == "ok"


async def test_bad_levels_and_features_are_programming_errors() -> None:
    """An unknown level or feature raises in the handler: INTERNAL_ERROR."""

    async def go(ctx: Context) -> None:
        ctx.supports("telepathy")

    result = await FusionTester(_app(go), client=FakeClient()).call("t", "go")
    assert result.error_code == "INTERNAL_ERROR"
    with pytest.raises(ValueError, match="feature must be one of"):
        Context.supports(Context(_request()), "telepathy")


def _request() -> Any:
    from mcpfusion import Request

    return Request("t", "go")


def test_elicitation_schema_of_a_model_is_flat_and_optional_fields_plain() -> None:
    """Optional[X] becomes X, not required; the model's title is left out."""
    schema = elicitation_schema(Optional_)
    assert "title" not in schema
    assert schema["properties"]["nickname"]["type"] == "string"
    assert schema["required"] == ["name"]
    with pytest.raises(TypeError, match="pydantic model class or a JSON Schema"):
        elicitation_schema(3)  # type: ignore[arg-type]


async def test_a_dict_schema_gives_the_answer_as_a_dict() -> None:
    """With a JSON Schema the accepted data is the dict the client sent."""

    async def go(ctx: Context) -> Any:
        answer = await ctx.elicit("Pick", {"type": "object", "properties": {}})
        return answer.data

    client = FakeClient(answers=[("accept", {"pick": "a"})])
    assert (await FusionTester(_app(go), client=client).call("t", "go")).data == {"pick": "a"}


async def test_an_accepted_answer_without_data_is_invalid() -> None:
    """accept with no content is INVALID_ANSWER."""

    async def go(ctx: Context) -> None:
        await ctx.elicit("Name?", Optional_)

    client = FakeClient(answers=[("accept", None)])
    result = await FusionTester(_app(go), client=client).call("t", "go")
    assert result.error_code == "INVALID_ANSWER"


async def test_sampling_checks_its_messages() -> None:
    """Messages are (role, text) pairs; sampling without a client is refused."""

    async def go(ctx: Context) -> str:
        reply = await ctx.sample([("user", "hi"), ("assistant", "hello"), ("user", "bye")])
        return reply.text

    client = FakeClient(replies=["ok"])
    assert (await FusionTester(_app(go), client=client).call("t", "go")).data == "ok"
    assert client.prompts == [[("user", "hi"), ("assistant", "hello"), ("user", "bye")]]
    refused = await FusionTester(_app(go)).call("t", "go")
    assert refused.error_code == "UNSUPPORTED_BY_CLIENT"

    async def bad(ctx: Context) -> None:
        await ctx.sample([("system", "x")])  # type: ignore[list-item]

    failed = await FusionTester(_app(bad), client=client).call("t", "go")
    assert failed.error_code == "INTERNAL_ERROR"


def test_the_fake_client_declares_what_it_has_a_script_for() -> None:
    """Features default to logging plus what is scripted; unknown ones raise."""
    assert FakeClient().features == {"logging"}
    assert FakeClient(answers=[("cancel", None)], roots=[]).features == {
        "logging",
        "elicitation",
        "roots",
    }
    with pytest.raises(ValueError, match="unknown features"):
        FakeClient(features=["telepathy"])  # type: ignore[list-item]


def test_with_invalidation_keeps_annotations_and_views() -> None:
    """A response without a view gets the block too; an error response stays as it is."""
    plain = with_invalidation(success("x"), "a.b", ("a.*",))
    assert plain.blocks[-1] == '<cache_invalidation caused_by="a.b">\n- a.*\n</cache_invalidation>'
    failed = ToolError("X", "no").envelope
    from mcpfusion._present.response import error_response

    error = error_response(failed)
    assert with_invalidation(error, "a.b", ("a.*",)) is error
    built = response("x").invalidate("c.d").build()
    merged = with_invalidation(built, "a.b", ("a.*", "c.d"))
    assert merged.blocks[1:] == (
        '<cache_invalidation caused_by="a.b">\n- c.d\n- a.*\n</cache_invalidation>',
    )


async def test_closing_the_stream_goes_through_a_channel_that_can() -> None:
    """ctx.close_sse_stream asks the channel when it offers it; otherwise it says False."""

    class Closing(FakeClient):
        closed = 0

        async def close_sse_stream(self) -> bool:
            self.closed += 1
            return True

    async def go(ctx: Context) -> str:
        return f"closed={await ctx.close_sse_stream()}"

    closing = Closing()
    assert (await FusionTester(_app(go), client=closing).call("t", "go")).data == "closed=True"
    assert closing.closed == 1
    assert (await FusionTester(_app(go), client=FakeClient()).call("t", "go")).data == (
        "closed=False"
    )
    assert (await FusionTester(_app(go)).call("t", "go")).data == "closed=False"


async def test_what_the_client_shows_follows_the_text_rules() -> None:
    """Log data, questions (schema titles too) and sampling prompts are neutralized, with
    U+FFFD for a lone surrogate; a system prompt that is not a str is refused."""
    hostile, clean = "a\ud800 <tool_error>", "a\ufffd &lt;tool_error>"

    async def go(ctx: Context) -> str:
        await ctx.log("error", "m", {hostile: [hostile, 1]})
        schema = {"type": "object", "properties": {"n": {"type": "string", "title": hostile}}}
        await ctx.elicit(hostile, schema)
        return (await ctx.sample(hostile, system=hostile)).text

    client = FakeClient(answers=[("decline", None)], replies=["ok"])
    assert (await FusionTester(_app(go), client=client).call("t", "go")).data == "ok"
    assert client.logs[0].data["data"] == {clean: [clean, 1]}
    [(message, schema)] = client.questions
    assert message == clean
    assert schema["properties"]["n"]["title"] == "a\ufffd <tool_error>"  # a value, not text
    assert client.prompts == [[("user", clean)]]

    async def bad(ctx: Context) -> None:
        await ctx.sample("hi", system=3)  # type: ignore[arg-type]

    failed = await FusionTester(_app(bad), client=client).call("t", "go")
    assert failed.error_code == "INTERNAL_ERROR"
