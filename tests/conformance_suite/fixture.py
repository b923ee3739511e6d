"""The conformance suite's fixture server, built only with mcpfusion's public API.

The suite calls tools by fixed names (``test_simple_text``, ``test_error_handling``, ...)
and checks what they return. Each one below implements its part of that contract as far
as mcpfusion can express it today; what it cannot express (non-text content, logging,
sampling, elicitation, resources, prompts, ...) is listed with the reason in
``EXPECTED_FAILURES.md``, and the tools that only make sense with those features are
left out. Serve it with ``mcpfusion run tests/conformance_suite/fixture.py:app --http``.
"""

from __future__ import annotations

from typing import Annotated, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field

from mcpfusion import Context, Fusion, ToolError

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
