"""The conformance suite's fixture server, built only with mcpfusion's public API.

The suite calls tools by fixed names (``test_simple_text``, ``test_error_handling``, ...)
and checks what they return. Each one below implements its part of that contract as far
as mcpfusion can express it today; what it cannot express is listed with the reason in
``EXPECTED_FAILURES.md``, and the tools that only make sense with those features are
left out. Serve it with ``mcpfusion run tests/conformance_suite/fixture.py:app --http``.
"""

from __future__ import annotations

import base64
from typing import Annotated, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field

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

app = Fusion("mcp-conformance-test-server", version="1.0.0")

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


# Lower case: the suite looks the definition up as `$defs.address`, and pydantic keys
# definitions by class name.
class address(BaseModel):
    """A postal address."""

    model_config = ConfigDict(title="address", json_schema_extra={"$anchor": "addressDef"})

    street: str = ""
    city: str = ""


# `json_schema_2020_12_tool`: the keywords a signature can produce ($defs, $anchor inside
# them, additionalProperties: false). $schema, allOf/anyOf and if/then/else at the top of
# the inputSchema need a way to declare the schema itself, which mcpfusion lacks.
json_schema = app.tool("json_schema_2020_12", exposition="flat")


@json_schema.action("tool", read_only=True)
def json_schema_2020_12_tool(
    name: str = "",
    address: address | None = None,
    contactMethod: Literal["phone", "email"] | None = None,  # the suite's spelling
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
