"""mcpfusion: MCP servers whose tool results are presented, not dumped."""

from mcpfusion._app.app import Fusion
from mcpfusion._app.workflow import Workflow
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
from mcpfusion._present.builder import ResponseBuilder, as_response, response
from mcpfusion._present.content import Audio, EmbeddedResource, Image, ResourceLink
from mcpfusion._present.paging import Page
from mcpfusion._present.presenter import Presenter, suggest
from mcpfusion._present.response import (
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
from mcpfusion._serve.options import HttpOptions
from mcpfusion._surface.outcome import PromptResult, ReadResult, SurfaceError
from mcpfusion._surface.prompt import Message, Prompt, assistant, messages_from_view, user
from mcpfusion._surface.resource import Resource
from mcpfusion._tools.caller_state import CallerState
from mcpfusion._tools.client import Elicitation, Root, Sampled
from mcpfusion._tools.client_needs import Confirm
from mcpfusion._tools.context import Context, Request
from mcpfusion._tools.icon import Icon
from mcpfusion._tools.tool import Tool
from mcpfusion._wire.parts import ResponseView, Suggestion, UIBlock

__all__ = [
    "Audio",
    "BlockAnnotations",
    "CallerState",
    "Confirm",
    "Context",
    "DefinitionError",
    "Elicitation",
    "EmbeddedResource",
    "ErrorEnvelope",
    "Fusion",
    "FusionError",
    "HttpOptions",
    "Icon",
    "Identity",
    "Image",
    "Message",
    "OutputMismatchError",
    "Page",
    "Presenter",
    "PresenterError",
    "Prompt",
    "PromptResult",
    "ReadResult",
    "Request",
    "Resource",
    "ResourceLink",
    "ResponseBuilder",
    "ResponseView",
    "Root",
    "Sampled",
    "SerializationError",
    "Suggestion",
    "SurfaceError",
    "Tool",
    "ToolError",
    "ToolResponse",
    "UIBlock",
    "Workflow",
    "as_response",
    "assistant",
    "error",
    "messages_from_view",
    "require_view",
    "required",
    "response",
    "success",
    "success_structured",
    "suggest",
    "tool_error",
    "toon_success",
    "user",
    "view_of",
]
