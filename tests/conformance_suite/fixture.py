"""The conformance suite's fixture server, built only with mcpfusion's public API.

The suite calls tools and prompts by fixed names (``test_simple_text``,
``test_error_handling``, ...) and checks what they return; each one below implements its
part of that contract. What fails anyway (what no server can do over stateless HTTP) is
listed with the reason in ``EXPECTED_FAILURES.md``. Serve it with
``mcpfusion run tests/conformance_suite/fixture.py:app --http --resumable``.
"""

from __future__ import annotations

import base64
import json
from typing import Annotated, Any, Literal

import anyio
from pydantic import BaseModel, Field

from mcpfusion import (
    Audio,
    Context,
    EmbeddedResource,
    Fusion,
    Image,
    Message,
    ResponseBuilder,
    ToolError,
    response,
    user,
)

# The suite's scenarios expect JSON text where a resource returns data.
app = Fusion("mcp-conformance-test-server", version="1.0.0", data_format="json")

# Flat exposition lists each action as its own MCP tool, named `test_<action>`.
test = app.tool("test", exposition="flat")


@test.action("simple_text", read_only=True)
def simple_text() -> str:
    """Tests simple text content response."""
    return "This is a simple text response for testing."


@test.action("error_handling", read_only=True)
def error_handling() -> str:
    """Tests error response handling."""
    raise ToolError("INTENTIONAL_ERROR", "This tool intentionally returns an error for testing")


@test.action("tool_with_progress", read_only=True)
async def tool_with_progress(ctx: Context) -> str:
    """Tests tool that reports progress notifications."""
    # The suite expects three increasing reports about 50 ms apart.
    for done in (0, 50):
        await ctx.progress(done, 100, f"Completed step {done} of 100")
        await anyio.sleep(0.05)
    await ctx.progress(100, 100, "Completed step 100 of 100")
    return f"Progress reported for token {ctx.meta.get('progressToken', 0)}"


@test.action("x_mcp_header", read_only=True)
def x_mcp_header(
    region: Annotated[
        str,
        Field(
            description="Mirrored into the Mcp-Param-Region header",
            json_schema_extra={"x-mcp-header": "Region"},
        ),
    ] = "<none>",
) -> str:
    """Tests SEP-2243 Mcp-Param-* server-side validation."""
    return f"region={region}"


# `json_schema_2020_12_tool`: a schema a signature cannot produce ($schema, allOf/anyOf and
# if/then/else at its top), declared as given and enforced as declared.
JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}
json_schema = app.tool("json_schema_2020_12", exposition="flat")


@json_schema.action("tool", read_only=True, input_schema=JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(
    name: str = "",
    contactMethod: str | None = None,  # the suite's spelling
    phone: str = "",
    email: str = "",
) -> str:
    """Tool with JSON Schema 2020-12 features."""
    return "json_schema_2020_12_tool"


# -- content beyond text, resources, prompts, completion ------------------------------------

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
"""A 1x1 red pixel."""
WAV = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")
"""An empty 8 kHz mono WAV file."""


@test.action("image_content", read_only=True)
def image_content() -> Image:
    """Tests image content response."""
    return Image(PNG)


@test.action("audio_content", read_only=True)
def audio_content() -> Audio:
    """Tests audio content response."""
    return Audio(WAV)


@test.action("embedded_resource", read_only=True)
def embedded_resource() -> EmbeddedResource:
    """Tests embedded resource content response."""
    return EmbeddedResource(
        "test://embedded-resource", text="This is an embedded resource content."
    )


@test.action("multiple_content_types", read_only=True)
def multiple_content_types() -> ResponseBuilder:
    """Tests response with multiple content types (text, image, resource)."""
    mixed = EmbeddedResource(
        "test://mixed-content-resource",
        text='{"test": "data", "value": 123}',
        mime_type="application/json",
    )
    return response("Multiple content types test:").attach(Image(PNG), mixed)


@app.resource("test://static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource for testing."""
    return "This is the content of the static text resource."


@app.resource("test://static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (image) for testing."""
    return PNG


@app.resource("test://template/{id}/data", mime_type="application/json")
def template_data(id: str) -> dict[str, object]:
    """A resource template with parameter substitution."""
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


@app.resource("test://watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource that can be subscribed to for updates."""
    return "Watched resource content"


@app.prompt()
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@app.prompt()
def test_prompt_with_arguments(
    arg1: Annotated[str, Field(description="First test argument")],
    arg2: Annotated[str, Field(description="Second test argument")],
) -> str:
    """A prompt with required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@test_prompt_with_arguments.complete("arg1")
def complete_arg1(value: str) -> list[str]:
    return [word for word in ("paris", "park", "party") if word.startswith(value)]


@app.prompt()
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, Field(description="URI of the resource to embed")],
) -> list[Message]:
    """A prompt that includes an embedded resource."""
    embedded = EmbeddedResource(resourceUri, text="Embedded resource content for testing.")
    return [user(embedded), user("Please process the embedded resource above.")]


@app.prompt()
def test_prompt_with_image() -> list[Message]:
    """A prompt that includes image content."""
    return [user(Image(PNG)), user("Please analyze the image above.")]


class PromptContext(BaseModel):
    """What test_input_required_result_prompt asks for."""

    context: str


@app.prompt()
async def test_input_required_result_prompt(ctx: Context) -> str:
    """Tests InputRequiredResult from prompts/get (SEP-2322 non-tool request)."""
    question = "What context should the prompt use?"
    answer = await ctx.elicit(question, PromptContext, key="user_context")
    return f"Use the following context: {answer.data.context if answer.accepted else '?'}"


# -- Talking to the client: logging, sampling, elicitation, input-required rounds, list
# changes. Each handler asks through the context; the adapter picks the protocol's way
# (a mid-call request on 2025-11-25, an input_required round on 2026-07-28).


@test.action("tool_with_logging", read_only=True)
async def tool_with_logging(ctx: Context) -> str:
    """Tests tool that emits log messages during execution."""
    for step in ("Tool execution started", "Tool processing data"):
        await ctx.log("info", step)
        await anyio.sleep(0.05)
    await ctx.log("info", "Tool execution completed")
    return "Tool with logging executed successfully"


@test.action("logging_tool", read_only=True)
async def logging_tool(ctx: Context) -> str:
    """Logs once on the request-scoped channel (SEP-2575)."""
    await ctx.log("info", "test_logging_tool ran")
    return "logged through the request-scoped, logLevel-gated channel"


@test.action("sampling", read_only=True)
async def sampling(ctx: Context, prompt: str) -> str:
    """Tests server-initiated sampling (LLM completion request)."""
    reply = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {reply.text or 'No response'}"


class UserResponse(BaseModel):
    """What test_elicitation asks for."""

    response: str = Field(description="User's response")


@test.action("elicitation", read_only=True)
async def elicitation(ctx: Context, message: str) -> str:
    """Tests server-initiated elicitation (user input request)."""
    answer = await ctx.elicit(message, UserResponse)
    content = answer.data.model_dump_json() if answer.accepted else "{}"
    return f"User response: action={answer.action}, content={content}"


class Defaults(BaseModel):
    """SEP-1034: a default for every primitive type."""

    name: str = Field(default="John Doe", description="User name")
    age: int = Field(default=30, description="User age")
    score: float = Field(default=95.5, description="User score")
    status: Literal["active", "inactive", "pending"] = Field(
        default="active", description="User status"
    )
    verified: bool = Field(default=True, description="Verification status")


@test.action("elicitation_sep1034_defaults", read_only=True)
async def elicitation_sep1034_defaults(ctx: Context) -> str:
    """Tests elicitation with default values for all primitive types (SEP-1034)."""
    answer = await ctx.elicit("Please provide user information", Defaults)
    content = answer.data.model_dump_json() if answer.accepted else "{}"
    return f"Elicitation result: action={answer.action}, content={content}"


ENUM_SCHEMA = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Simple enum without titles",
            "enum": ["active", "inactive", "pending"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Enum with titled options (oneOf)",
            "oneOf": [
                {"const": "low", "title": "Low Priority"},
                {"const": "medium", "title": "Medium Priority"},
                {"const": "high", "title": "High Priority"},
            ],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Multi-select without titles",
            "items": {"type": "string", "enum": ["read", "write", "execute"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Multi-select with titled options",
            "items": {
                "anyOf": [
                    {"const": "feature", "title": "New Feature"},
                    {"const": "bug", "title": "Bug Fix"},
                    {"const": "docs", "title": "Documentation"},
                ]
            },
        },
        "legacyEnum": {
            "type": "string",
            "description": "Legacy enum with enumNames",
            "enum": ["small", "medium", "large"],
            "enumNames": ["Small Size", "Medium Size", "Large Size"],
        },
    },
    "required": ["untitledSingle", "titledSingle", "untitledMulti", "titledMulti", "legacyEnum"],
}


@test.action("elicitation_sep1330_enums", read_only=True)
async def elicitation_sep1330_enums(ctx: Context) -> str:
    """Tests elicitation with enum schema variations per SEP-1330."""
    answer = await ctx.elicit("Please select values using different enum schema types", ENUM_SCHEMA)
    content = json.dumps(answer.data, separators=(",", ":")) if answer.accepted else "{}"
    return f"Elicitation completed: action={answer.action}, content={content}"


@test.action("streaming_elicitation", read_only=True)
async def streaming_elicitation(ctx: Context) -> str:
    """A tool that needs elicitation (SEP-2575 / SEP-2322)."""
    answer = await ctx.elicit("The stateless streaming probe asks for a word", UserResponse)
    return f"elicitation {answer.action}"


@test.action("missing_capability", read_only=True, requires_client=["sampling"])
async def missing_capability() -> str:
    """Needs the client's sampling capability (SEP-2575)."""
    return "Client declared sampling capability; proceeding."


class Name(BaseModel):
    """A name, asked for."""

    name: str


class Confirmation(BaseModel):
    """A yes or no."""

    ok: bool


class Color(BaseModel):
    """A favourite colour."""

    color: str


@test.action("input_required_result_elicitation", read_only=True)
async def input_required_result_elicitation(ctx: Context) -> str:
    """Tests InputRequiredResult with a single elicitation request."""
    answer = await ctx.elicit("What is your name?", Name, key="user_name")
    return f"Hello, {answer.data.name if answer.accepted else 'stranger'}!"


@test.action("input_required_result_sampling", read_only=True)
async def input_required_result_sampling(ctx: Context) -> str:
    """Tests InputRequiredResult with a single sampling request."""
    reply = await ctx.sample(
        "What is the capital of France?", max_tokens=100, key="capital_question"
    )
    return f"Model said: {reply.text or '?'}"


@test.action("input_required_result_list_roots", read_only=True)
async def input_required_result_list_roots(ctx: Context) -> str:
    """Tests InputRequiredResult with a single roots/list request."""
    return f"Client exposed {len(await ctx.list_roots(key='client_roots'))} root(s)."


@test.action("input_required_result_request_state", read_only=True)
async def input_required_result_request_state(ctx: Context) -> str:
    """Tests requestState round-tripping in the InputRequiredResult flow."""
    await ctx.elicit("Please confirm", Confirmation, key="confirm")
    return "state-ok: confirmation received"


@test.action("input_required_result_multiple_inputs", read_only=True)
async def input_required_result_multiple_inputs(ctx: Context) -> str:
    """Tests InputRequiredResult carrying elicitation, sampling and roots requests together."""
    await ctx.gather(
        ctx.elicit("What is your name?", Name, key="user_name"),
        ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    return "All inputs received."


@test.action("input_required_result_multi_round", read_only=True)
async def input_required_result_multi_round(ctx: Context) -> str:
    """Tests a three-round InputRequiredResult flow with evolving requestState."""
    name = await ctx.elicit("Step 1: What is your name?", Name, key="step1")
    color = await ctx.elicit("Step 2: What is your favorite color?", Color, key="step2")
    who = name.data.name if name.accepted else None
    return f"{who} likes {color.data.color if color.accepted else None}."


@test.action("input_required_result_tampered_state", read_only=True)
async def input_required_result_tampered_state(ctx: Context) -> str:
    """Tests that the server rejects a tampered requestState echo (the SDK's boundary)."""
    await ctx.elicit("Please confirm", Confirmation, key="confirm")
    return "state-ok: round-1"


@test.action("input_required_result_capabilities", read_only=True)
async def input_required_result_capabilities(ctx: Context) -> str:
    """Tests that input requests only use what the client declared."""
    if ctx.supports("sampling"):
        await ctx.sample("Say hello", max_tokens=50, key="sample")
    if ctx.supports("elicitation"):
        await ctx.elicit("What is your name?", Name, key="ask")
    return "capability-gated"


@test.action("reconnection", read_only=True)
async def reconnection(ctx: Context) -> str:
    """Tests SSE polling by closing stream mid-call (SEP-1699)."""
    await ctx.log("info", "Before disconnect")
    await ctx.close_sse_stream()  # served with --resumable: the client reconnects
    await anyio.sleep(0.2)
    await ctx.log("info", "After reconnect")
    return "Reconnection test completed"


# A tool that appears and disappears at run time: test_trigger_tool_change announces it.
dynamic = app.tool("dynamic", exposition="flat", enabled=False)


@dynamic.action("tool", read_only=True)
def dynamic_tool() -> str:
    """A tool enabled and disabled by test_trigger_tool_change."""
    return "dynamic"


@test.action("trigger_tool_change")
async def trigger_tool_change() -> str:
    """Mutates the tool list and announces it to subscriptions/listen streams (SEP-2575)."""
    await dynamic.enable()
    await dynamic.disable()
    return "tool list changed"


# A prompt that appears and disappears at run time: test_trigger_prompt_change announces it.
@app.prompt(enabled=False)
def test_dynamic_prompt() -> str:
    """A prompt enabled and disabled by test_trigger_prompt_change."""
    return "dynamic"


@test.action("trigger_prompt_change")
async def trigger_prompt_change() -> str:
    """Mutates the prompt list and announces it to subscriptions/listen streams (SEP-2575)."""
    await test_dynamic_prompt.enable()
    await test_dynamic_prompt.disable()
    return "prompt list changed"


# -- Tasks (SEP-2663) --------------------------------------------------------------------
# The suite calls these by bare names (greet, slow_compute, ...); a flat tool lists each
# action as `{tool}{separator}{action}`, so the names are split where they allow it.

# `greet` has no separator to split at: tool "gr", separator "e", action "t" would be as
# odd; "gr" + "e" + "et" spells it with the public API and nothing else.
greeting = app.tool("gr", exposition="flat", separator="e")


@greeting.action("et", read_only=True)
def greet(name: str) -> str:
    """A sync-only tool: never a task."""
    return f"Hello, {name}!"


slow = app.tool("slow", exposition="flat")


@slow.action("compute", read_only=True, task="optional")
async def slow_compute(ctx: Context, seconds: float = 0, label: str = "") -> str:
    """Sleeps `seconds` (reporting progress), then answers; a task when the client can."""
    await ctx.progress(0, seconds or None, f"computing {label}")
    await anyio.sleep(seconds)
    await ctx.progress(seconds, seconds or None, f"computed {label}")
    return f"Computed {label or 'it'} in {seconds} s"


failing = app.tool("failing", exposition="flat")


@failing.action("job", read_only=True, task="always")
async def failing_job() -> str:
    """Always a task; fails as a tool (an isError result) after about a second."""
    await anyio.sleep(1)
    raise ToolError("JOB_FAILED", "This job always fails")


protocol = app.tool("protocol", exposition="flat")


# A protocol-level failure: the call needs the client's roots, which the suite's client
# does not declare, so the task fails with -32021 instead of completing.
@protocol.action("error_job", read_only=True, task="always", requires_client=["roots"])
async def protocol_error_job(ctx: Context) -> str:
    """Always a task; ends failed with a JSON-RPC error, never a result."""
    return f"{len(await ctx.list_roots())} roots"


class DeleteConfirmation(BaseModel):
    """Whether to delete."""

    confirm: bool


confirm = app.tool("confirm", exposition="flat")


@confirm.action("delete", destructive=True, task="optional")
async def confirm_delete(ctx: Context, filename: str) -> str:
    """Asks the user before deleting; as a task, the question waits in the task."""
    answer = await ctx.elicit(f"Delete {filename}?", DeleteConfirmation)
    deleted = answer.accepted and answer.data.confirm
    return f"{'Deleted' if deleted else 'Kept'} {filename}"


class Answer(BaseModel):
    """A name, confirmed."""

    name: str = ""
    confirm: bool = False


multi = app.tool("multi", exposition="flat")


@multi.action("input", read_only=True, task="optional")
async def multi_input(ctx: Context) -> str:
    """Asks two questions at once; the task waits for both answers."""
    first, second = await ctx.gather(
        ctx.elicit("First name?", Answer), ctx.elicit("Second name?", Answer)
    )
    names = [a.data.name if a.accepted else "?" for a in (first, second)]
    return f"Got {' and '.join(names)}"


@test.action("tool_with_task", read_only=True, task="always", task_begins="handler")
async def tool_with_task(ctx: Context) -> str:
    """Asks a name in the call's own rounds, then continues as a task (MRTR, then tasks)."""
    answer = await ctx.elicit("What is your name?", Name, key="user_name")
    await ctx.continue_as_task()
    await anyio.sleep(0.1)
    return f"Hello, {answer.data.name if answer.accepted else 'stranger'}, from a task!"
