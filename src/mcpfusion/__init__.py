"""mcpfusion: MCP servers whose tool results are presented, not dumped."""

from mcpfusion.app import Fusion
from mcpfusion.builder import ResponseBuilder, as_response, response, success, toon_success
from mcpfusion.context import Context, Request
from mcpfusion.errors import (
    DefinitionError,
    FusionError,
    PresenterError,
    SerializationError,
    ToolError,
)
from mcpfusion.presenter import Presenter, suggest
from mcpfusion.response import (
    ResponseView,
    Suggestion,
    ToolResponse,
    error,
    required,
    success_structured,
    tool_error,
    view_of,
)
from mcpfusion.tool import Tool
from mcpfusion.ui import UIBlock

__all__ = [
    "Context",
    "DefinitionError",
    "Fusion",
    "FusionError",
    "Presenter",
    "PresenterError",
    "Request",
    "ResponseBuilder",
    "ResponseView",
    "SerializationError",
    "Suggestion",
    "Tool",
    "ToolError",
    "ToolResponse",
    "UIBlock",
    "as_response",
    "error",
    "required",
    "response",
    "success",
    "success_structured",
    "suggest",
    "tool_error",
    "toon_success",
    "view_of",
]
