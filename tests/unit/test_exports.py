"""The public surface: what ``mcpfusion`` and its public namespaces export."""

from __future__ import annotations

import subprocess
import sys

import mcpfusion
import mcpfusion.testing
import mcpfusion.ui
import mcpfusion.wire

PUBLIC = {
    mcpfusion: [
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
    ],
    mcpfusion.ui: [
        "UIBlock",
        "code_block",
        "echarts",
        "json",
        "list",
        "markdown",
        "mermaid",
        "summary",
        "table",
    ],
    mcpfusion.testing: ["CallResult", "FusionTester", "ProgressEvent"],
    mcpfusion.wire: [
        "RESERVED_TAGS",
        "ParsedError",
        "ParsedResponse",
        "ParsedUIBlock",
        "fence",
        "neutralize",
        "neutralize_json",
        "parse",
        "parse_error",
    ],
}


def _isort_order(name: str) -> tuple[bool, bool, str]:
    """Constants, then classes, then functions: the order ruff keeps ``__all__`` in."""
    return (not name.isupper(), not name[0].isupper(), name)


def test_all_is_pinned_and_sorted() -> None:
    """Each public namespace exports exactly the pinned names, sorted, with nothing private."""
    for module, names in PUBLIC.items():
        assert list(module.__all__) == names, module.__name__
        assert sorted(names, key=_isort_order) == names, module.__name__
        assert not [name for name in names if name.startswith("_")]


def test_every_exported_name_exists() -> None:
    """Every name in ``__all__`` is an attribute of its module."""
    for module, names in PUBLIC.items():
        missing = [name for name in names if not hasattr(module, name)]
        assert missing == [], module.__name__


def test_importing_the_core_does_not_load_the_sdk() -> None:
    """``import mcpfusion`` stays free of the MCP SDK; only serving an app loads it."""
    code = "import sys, mcpfusion, mcpfusion.testing; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
