"""UI blocks: the ``UIBlock`` value and the helpers that build them (SPEC §4)."""

from mcpfusion._present.ui import (
    UIBlock,
    audio,
    code_block,
    echarts,
    image,
    json,
    list,
    markdown,
    mermaid,
    summary,
    table,
)

__all__ = [
    "UIBlock",
    "audio",
    "code_block",
    "echarts",
    "image",
    "json",
    "list",
    "markdown",
    "mermaid",
    "summary",
    "table",
]
