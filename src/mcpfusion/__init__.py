"""mcpfusion: MCP servers whose tool results are presented, not dumped."""

from mcpfusion._app import Fusion
from mcpfusion._builder import ResponseBuilder, as_response, response
from mcpfusion._client import Confirm, Elicitation, Root, Sampled
from mcpfusion._context import Context, Request
from mcpfusion._errors import (
    DefinitionError,
    ErrorEnvelope,
    FusionError,
    OutputMismatchError,
    PresenterError,
    SerializationError,
    ToolError,
)
from mcpfusion._identity import Identity
from mcpfusion._options import HttpOptions
from mcpfusion._parts import ResponseView, Suggestion, UIBlock
from mcpfusion._presenter import Presenter, suggest
from mcpfusion._response import (
    BlockAnnotations,
    ToolResponse,
    error,
    require_view,
    required,
    success,
    success_structured,
    tool_error,
    toon_success,
    view_of,
)
from mcpfusion._tool import Tool

__all__ = [
    "BlockAnnotations",
    "Confirm",
    "Context",
    "DefinitionError",
    "Elicitation",
    "ErrorEnvelope",
    "Fusion",
    "FusionError",
    "HttpOptions",
    "Identity",
    "OutputMismatchError",
    "Presenter",
    "PresenterError",
    "Request",
    "ResponseBuilder",
    "ResponseView",
    "Root",
    "Sampled",
    "SerializationError",
    "Suggestion",
    "Tool",
    "ToolError",
    "ToolResponse",
    "UIBlock",
    "as_response",
    "error",
    "require_view",
    "required",
    "response",
    "success",
    "success_structured",
    "suggest",
    "tool_error",
    "toon_success",
    "view_of",
]
