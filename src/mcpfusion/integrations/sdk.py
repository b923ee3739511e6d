"""Presenters in the official SDK's servers, and an app's tools inside an ``MCPServer``.

Three ways in, from the smallest step to the largest:

- ``@presented(view)`` under ``@server.tool()`` (an ``MCPServer``): the tool's value is
  presented, its ``ToolError`` sent as the ``<tool_error>`` envelope. The same decorator
  serves a low-level ``Server``'s ``on_call_tool``: a presented function returns the
  ``CallToolResult`` to send.
- ``mount(app, server)``: every tool of an mcpfusion app, served by an existing
  ``MCPServer`` with the app's names, schemas, annotations and exact results.
- ``mcpfusion.server.build_server(app)``: the low-level ``Server`` of the app itself, to
  which hand-written handlers for other methods (resources, prompts) are added with
  ``server.add_request_handler``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from mcpfusion._app.app import Fusion
from mcpfusion._errors import DefinitionError
from mcpfusion._present.presenter import Presenter
from mcpfusion._serve.sdk import ServableApp, to_call_tool_result
from mcpfusion._serve.sdk_private import add_tool, check, tool_manager
from mcpfusion._tools.context import Progress
from mcpfusion.integrations._adopt import adopt

__all__ = ["mount", "presented", "tools"]

Presented = Callable[..., Any]
"""A presented tool function: the original's parameters, returning a ``CallToolResult``."""


def presented(presenter: Presenter | None = None) -> Callable[[Callable[..., Any]], Presented]:
    """Presents a tool function's value: ``@server.tool()`` above, ``@presented(view)`` below.

    Example::

        @server.tool()
        @presented(user_view)
        async def get_user(user_id: int) -> dict[str, Any]:
            return await db.user(user_id)

    The returned function keeps the original's name, docstring and parameters (a
    ``Context`` parameter included) and returns a ``CallToolResult``, so the server derives
    no output schema from the original return annotation and never serializes the raw
    value. Presenter callbacks receive the tool's ``Context`` argument, or ``None`` when it
    takes none.

    Args:
        presenter: the Presenter for the value; ``None`` sends it with ``success`` (a
            ``ToolResponse`` or ``ResponseBuilder`` returned by the tool passes as it is).

    Raises:
        DefinitionError: if ``presenter`` is not a Presenter (``@presented`` without its
            parentheses), or the function cannot be read.
    """
    if presenter is not None and not isinstance(presenter, Presenter):
        raise DefinitionError(
            f"presented() takes a Presenter or nothing; got {presenter!r}. Write "
            "@presented() or @presented(view), with the parentheses."
        )

    def decorate(fn: Callable[..., Any]) -> Presented:
        return adopt(
            fn,
            presenter,
            result_type=types.CallToolResult,
            send=to_call_tool_result,
            context_type=Context,
        )

    return decorate


class _AppTool(Tool):
    """One listed tool of an app, as an ``MCPServer`` tool: the app validates and answers."""

    app: SkipJsonSchema[Any] = Field(exclude=True)
    listed_output: dict[str, Any] | None = Field(default=None, exclude=True)

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """The app's ``outputSchema`` for this tool, as listed."""
        return self.listed_output

    async def run(
        self,
        arguments: dict[str, Any],
        context: Context[Any, Any],
        convert_result: bool = False,
    ) -> Any:
        progress: Progress | None = None
        meta: Mapping[str, Any] | None = None
        try:
            request = context.request_context
        except ValueError:  # called in-process, outside a request: nobody to report to
            pass
        else:
            progress = request.session.report_progress
            meta = request.meta
        response = await self.app.call_tool(self.name, arguments, progress=progress, meta=meta)
        return to_call_tool_result(response)


def _answered_by_the_app() -> None:
    """Stands in for a tool function: an app's tool is answered by ``Fusion.call_tool``."""


def tools(app: ServableApp) -> list[Tool]:
    """The tools of ``app`` as ``MCPServer`` tools: ``MCPServer("name", tools=tools(app))``.

    Each keeps its listed name, description, input and output schemas and annotations;
    a call goes to ``app.call_tool`` with the client's arguments as sent (the app
    validates them), progress reports and request metadata, and its result is sent
    exactly. A ``Fusion`` app is frozen here: define every tool first.

    Raises:
        DefinitionError: if a tool of the app is incomplete.
    """
    if isinstance(app, Fusion):
        app.freeze()
    made: list[Tool] = []
    for listed in app.list_tools():
        spec = types.Tool.model_validate(listed)
        base = Tool.from_function(
            _answered_by_the_app,
            name=spec.name,
            description=spec.description or "",
            annotations=spec.annotations,
        )
        fields = {name: getattr(base, name) for name in Tool.model_fields}
        fields["parameters"] = listed["inputSchema"]
        made.append(_AppTool(**fields, app=app, listed_output=listed.get("outputSchema")))
    return made


def mount(app: ServableApp, server: MCPServer[Any]) -> None:
    """Serves every tool of ``app`` from an existing ``MCPServer``, next to its own tools.

    What each tool keeps and how it is called is ``tools``'s. The server has no public
    way to add a ready-made tool after it is built, so this adds them to its tool
    manager (pinned by the tests for the SDK versions this package allows).

    Raises:
        DefinitionError: if the server already has a tool of the same name, or a tool of
            the app is incomplete.
    """
    check()
    manager = tool_manager(server)
    made = tools(app)
    taken = [tool.name for tool in made if manager.get_tool(tool.name) is not None]
    if taken:
        raise DefinitionError(
            f"the server already has tools named {', '.join(taken)}; rename the app's or "
            "the server's"
        )
    for tool in made:
        add_tool(manager, tool)
