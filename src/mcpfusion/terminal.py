"""How a terminal shows tool definitions and tool results: labelled blocks and token counts."""

from mcpfusion._dev.terminal import (
    Style,
    TokenCounter,
    ToolResult,
    classify,
    definition_json,
    render_result,
    render_tools,
)

__all__ = [
    "Style",
    "TokenCounter",
    "ToolResult",
    "classify",
    "definition_json",
    "render_result",
    "render_tools",
]
