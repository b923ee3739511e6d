"""Presenters in FastMCP servers, and an app's tools inside a ``FastMCP`` server.

Install with the ``mcpfusion[fastmcp]`` extra. Three ways in:

- ``@presented(view)`` under ``@mcp.tool``: the tool's value is presented and its
  ``ToolError`` sent as the ``<tool_error>`` envelope; FastMCP derives no output schema
  from the return annotation, so it never re-serializes the unmasked value.
- ``mcp.add_middleware(ErrorEnvelopes())``: argument validation failures of every tool
  become ``<validation_error>`` results, and an mcpfusion ``ToolError`` raised by any
  tool its envelope.
- ``mount(app, mcp)``: every tool of an mcpfusion app, served by the FastMCP server with
  the app's names, schemas, annotations and exact results.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pydantic
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError as HostToolError
from fastmcp.exceptions import ValidationError as HostValidationError
from fastmcp.server.context import Context
from fastmcp.server.dependencies import get_context
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import Tool, ToolResult
from mcp import types
from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from mcpfusion._app.app import Fusion
from mcpfusion._errors import DefinitionError, ToolError
from mcpfusion._present.failures import from_exception, validation_failure
from mcpfusion._present.presenter import Presenter
from mcpfusion._present.response import ToolResponse
from mcpfusion._serve.sdk import ServableApp, to_call_tool_result
from mcpfusion._tools.context import Progress
from mcpfusion._tools.validation import field_problems
from mcpfusion.integrations._adopt import adopt

__all__ = ["ErrorEnvelopes", "mount", "presented", "tools"]

Presented = Callable[..., Any]
"""A presented tool function: the original's parameters, returning a ``CallToolResult``."""


def presented(presenter: Presenter | None = None) -> Callable[[Callable[..., Any]], Presented]:
    """Presents a FastMCP tool's value: ``@mcp.tool`` above, ``@presented(view)`` below.

    Example::

        @mcp.tool
        @presented(user_view)
        async def get_user(user_id: int, ctx: Context) -> UserRow:
            await ctx.report_progress(1, 2)
            return await db.user(user_id)

    The returned function keeps the original's name, docstring and parameters (FastMCP's
    ``Context`` included: progress and logging work as usual) and returns a
    ``CallToolResult``, which FastMCP sends as it is. Whatever the original's return
    annotation, FastMCP derives no output schema and never serializes the raw value, so
    fields the Presenter's schema leaves out are never sent. Presenter callbacks receive
    the tool's ``Context`` argument, or ``None`` when it takes none.

    Args:
        presenter: the Presenter for the value; ``None`` sends it with ``success`` (a
            ``ToolResponse`` or ``ResponseBuilder`` returned by the tool passes as it is).

    Raises:
        DefinitionError: if ``presenter`` is not a Presenter (``@presented`` without its
            parentheses), the function is already a FastMCP tool (``@presented`` above
            ``@mcp.tool``), or it cannot be read.
    """
    if presenter is not None and not isinstance(presenter, Presenter):
        raise DefinitionError(
            f"presented() takes a Presenter or nothing; got {presenter!r}. Write "
            "@presented() or @presented(view), with the parentheses."
        )

    def decorate(fn: Callable[..., Any]) -> Presented:
        if isinstance(fn, Tool) or hasattr(fn, "__fastmcp__"):
            raise DefinitionError(
                "presented() must wrap the function before FastMCP registers it: put "
                "@presented(...) below @mcp.tool"
            )
        return adopt(
            fn,
            presenter,
            result_type=types.CallToolResult,
            send=to_call_tool_result,
            context_type=Context,
        )

    return decorate


def _tool_result(response: ToolResponse) -> ToolResult:
    return ToolResult.from_mcp_result(to_call_tool_result(response))


class ErrorEnvelopes(Middleware):
    """FastMCP middleware sending mcpfusion's envelopes for every tool of the server.

    - Arguments FastMCP rejects become the ``<validation_error>`` result an mcpfusion
      app sends (``action`` is the tool's name; a field's text says what was sent and
      how to fix it).
    - An mcpfusion ``ToolError`` raised by any tool, presented or not, becomes its
      ``<tool_error>`` envelope.

    Every other failure is left to FastMCP (its ``ToolError``, its masking of unexpected
    exceptions). Add it with ``mcp.add_middleware(ErrorEnvelopes())``.
    """

    async def on_call_tool(
        self,
        context: MiddlewareContext[types.CallToolRequestParams],
        call_next: CallNext[types.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        name = context.message.name
        try:
            return await call_next(context)
        except HostValidationError as exc:
            cause = exc.__cause__
            if not isinstance(cause, pydantic.ValidationError):
                raise
            arguments = context.message.arguments or {}
            accepted = await _accepted(context, name)
            return _tool_result(
                validation_failure(name, field_problems(cause, arguments, accepted))
            )
        except HostToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ToolError):
                raise
            return _tool_result(from_exception(cause, name))


async def _accepted(context: MiddlewareContext[Any], name: str) -> list[str]:
    """The argument names a tool's input schema declares, for an unknown-field message."""
    server = context.fastmcp_context.fastmcp if context.fastmcp_context else None
    tool = await server.get_tool(name) if server is not None else None
    properties = tool.parameters.get("properties", {}) if tool is not None else {}
    return list(properties) if isinstance(properties, Mapping) else []


class _AppTool(Tool):
    """One listed tool of an app, as a FastMCP tool: the app validates and answers."""

    app: SkipJsonSchema[Any] = Field(exclude=True)
    listed_name: str = Field(exclude=True)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        progress: Progress | None = None
        meta: Mapping[str, Any] | None = None
        try:
            ctx = get_context()
        except RuntimeError:  # called in-process, outside a request: nobody to report to
            pass
        else:
            progress = ctx.report_progress
            request = ctx.request_context
            meta = request.meta if request is not None else None
        # The listed name, not self.name: FastMCP may list the tool under a prefix.
        response = await self.app.call_tool(
            self.listed_name, arguments, progress=progress, meta=meta
        )
        return _tool_result(response)


def tools(app: ServableApp) -> list[Tool]:
    """The tools of ``app`` as FastMCP tools (``mount`` adds them to a server).

    Raises:
        DefinitionError: if a tool of the app is incomplete.
    """
    if isinstance(app, Fusion):
        app.freeze()
    made: list[Tool] = []
    for listed in app.list_tools():
        spec = types.Tool.model_validate(listed)
        made.append(
            _AppTool(
                name=spec.name,
                description=spec.description,
                parameters=listed["inputSchema"],
                output_schema=listed.get("outputSchema"),
                annotations=spec.annotations,
                app=app,
                listed_name=spec.name,
            )
        )
    return made


def mount(app: ServableApp, server: FastMCP[Any]) -> None:
    """Serves every tool of ``app`` from a FastMCP server, next to its own tools.

    Each keeps its listed name, description, input and output schemas and annotations
    (FastMCP adds a display ``title`` of its own); a call goes to ``app.call_tool`` with
    the client's arguments as sent (the app validates them), FastMCP's progress
    reporting and the request metadata, and its result is sent exactly. A ``Fusion``
    app is frozen here: define every tool first. A name the server already serves
    follows its ``on_duplicate`` setting.

    Raises:
        DefinitionError: if a tool of the app is incomplete.
    """
    for tool in tools(app):
        server.add_tool(tool)
