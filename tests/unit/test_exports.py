"""The public surface: what ``mcpfusion`` and its public namespaces export."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import mcpfusion
import mcpfusion.auth
import mcpfusion.cli
import mcpfusion.middleware
import mcpfusion.server
import mcpfusion.terminal
import mcpfusion.testing
import mcpfusion.ui
import mcpfusion.wire

PUBLIC = {
    mcpfusion: [
        "Context",
        "DefinitionError",
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
        "ParsedResponse",
        "fence",
        "neutralize",
        "neutralize_json",
        "parse",
        "parse_error",
        "parse_ui_block",
    ],
    mcpfusion.server: [
        "HttpOptions",
        "ServableApp",
        "asgi_app",
        "build_server",
        "is_loopback",
        "run_http",
        "run_stdio",
        "serve_stdio",
        "to_call_tool_result",
        "transport_security",
    ],
    mcpfusion.terminal: [
        "Style",
        "TokenCounter",
        "ToolResult",
        "classify",
        "definition_json",
        "render_result",
        "render_tools",
    ],
    mcpfusion.auth: [
        "ALGORITHMS",
        "MAX_TOKEN_CHARS",
        "APIKeyVerifier",
        "Auth",
        "IntrospectionVerifier",
        "JWTVerifier",
        "Verifier",
        "VerifierUnavailable",
        "any_of",
        "hash_api_key",
    ],
    mcpfusion.middleware: [
        "AUDIT_LOGGER",
        "Call",
        "MemoryRateLimitStore",
        "Middleware",
        "Next",
        "RateLimitStore",
        "audit_log",
        "audit_record",
        "by_identity",
        "error_code",
        "rate_limit",
        "tracing",
    ],
    mcpfusion.cli: [
        "USAGE_ERROR",
        "UsageError",
        "build_parser",
        "http_options",
        "load_app",
        "main",
        "parse_arguments",
    ],
}

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "mcpfusion"


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


def test_every_module_is_public_or_private() -> None:
    """A module is public (pinned above) or private (a leading underscore): no third kind."""
    public = {module.__name__ for module in PUBLIC}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        name = ".".join(parts)
        if any(part.startswith("_") for part in parts[1:]):
            continue
        assert name in public, f"{name} is neither pinned as public nor private"


def test_examples_benchmarks_and_docs_import_only_public_names() -> None:
    """What users read and copy never imports a private module of mcpfusion."""
    private = re.compile(r"\bmcpfusion(?:\.[a-z_]+)*\._[a-z]")
    sources = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    for folder in ("examples", "benchmarks"):
        sources += (ROOT / folder).rglob("*.py")
    offenders = [str(p.relative_to(ROOT)) for p in sources if private.search(p.read_text())]
    assert offenders == []
