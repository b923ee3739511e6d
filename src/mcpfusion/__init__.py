"""mcpfusion: MCP servers whose tool results are presented, not dumped."""

from mcpfusion.builder import ResponseBuilder, as_response, response, success, toon_success
from mcpfusion.errors import (
    DefinitionError,
    FusionError,
    PresenterError,
    SerializationError,
    ToolError,
)
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
from mcpfusion.ui import UIBlock

__all__ = [
    "DefinitionError",
    "FusionError",
    "PresenterError",
    "ResponseBuilder",
    "ResponseView",
    "SerializationError",
    "Suggestion",
    "ToolError",
    "ToolResponse",
    "UIBlock",
    "as_response",
    "error",
    "required",
    "response",
    "success",
    "success_structured",
    "tool_error",
    "toon_success",
    "view_of",
]
