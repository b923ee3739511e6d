"""The public surface: what ``mcpfusion`` and its public namespaces export."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import mcpfusion
import mcpfusion.auth
import mcpfusion.cli
import mcpfusion.integrations
import mcpfusion.integrations.sdk
import mcpfusion.middleware
import mcpfusion.openapi
import mcpfusion.redis
import mcpfusion.server
import mcpfusion.terminal
import mcpfusion.testing
import mcpfusion.ui
import mcpfusion.wire

PUBLIC = {
    mcpfusion: [
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
    ],
    mcpfusion.ui: [
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
    ],
    mcpfusion.testing: [
        "CallResult",
        "FakeClient",
        "FusionTester",
        "HttpTester",
        "LogEvent",
        "ProgressEvent",
    ],
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
        "AppFactory",
        "HostPolicy",
        "HttpOptions",
        "InMemoryEventStore",
        "ServableApp",
        "asgi_app",
        "build_server",
        "host_policy",
        "is_loopback",
        "run_http",
        "run_stdio",
        "run_workers",
        "serve_stdio",
        "to_call_tool_result",
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
    mcpfusion.integrations: [],
    mcpfusion.integrations.sdk: ["mount", "presented", "tools"],
    mcpfusion.auth: [
        "ALGORITHMS",
        "MAX_TOKEN_CHARS",
        "APIKeyVerifier",
        "Auth",
        "IntrospectionVerifier",
        "JWTVerifier",
        "OAuthProvider",
        "SignIn",
        "TokenExchange",
        "Verifier",
        "VerifierUnavailable",
        "any_of",
        "github",
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
    mcpfusion.openapi: ["ApiKey", "Bearer", "from_openapi", "load_document"],
    mcpfusion.redis: [
        "RedisCallerStore",
        "RedisEventStore",
        "RedisRateLimitStore",
        "RedisSignInStore",
        "RedisSubscriptionBus",
        "RedisTaskStore",
        "shared_state",
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

# Public modules this venv cannot import (their framework is an optional extra, tested in
# its own venv): pinned from their source.
PUBLIC_BY_SOURCE = {
    "mcpfusion.integrations.fastmcp": ["ErrorEnvelopes", "mount", "presented", "tools"],
}

# Which modules may import the MCP SDK is a path rule (``_serve/`` and ``integrations/``),
# checked with the package order in test_layering.py.


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _source_all(name: str) -> list[str]:
    """The ``__all__`` a module's source assigns, read without importing it."""
    path = PACKAGE.parent.joinpath(*name.split(".")).with_suffix(".py")
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list)
            return [str(item) for item in value]
    raise AssertionError(f"{name} assigns no __all__")


def _isort_order(name: str) -> tuple[bool, bool, str]:
    """Constants, then classes, then functions: the order ruff keeps ``__all__`` in."""
    return (not name.isupper(), not name[0].isupper(), name)


def test_all_is_pinned_and_sorted() -> None:
    """Each public namespace exports exactly the pinned names, sorted, with nothing private."""
    for module, names in PUBLIC.items():
        assert list(module.__all__) == names, module.__name__
        assert sorted(names, key=_isort_order) == names, module.__name__
        assert not [name for name in names if name.startswith("_")]


def test_modules_of_optional_frameworks_are_pinned_from_source() -> None:
    """A public module of an optional extra exports exactly its pinned names, sorted."""
    for name, names in PUBLIC_BY_SOURCE.items():
        assert _source_all(name) == names, name
        assert sorted(names, key=_isort_order) == names, name


def test_every_exported_name_exists() -> None:
    """Every name in ``__all__`` is an attribute of its module."""
    for module, names in PUBLIC.items():
        missing = [name for name in names if not hasattr(module, name)]
        assert missing == [], module.__name__


def test_importing_the_core_does_not_load_the_sdk() -> None:
    """``import mcpfusion`` stays free of the MCP SDK; only serving an app loads it."""
    modules = "mcpfusion, mcpfusion.testing, mcpfusion.integrations"
    code = f"import sys, {modules}; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_module_is_public_or_private() -> None:
    """A module is public (pinned above) or private (a leading underscore): no third kind."""
    public = {module.__name__ for module in PUBLIC} | set(PUBLIC_BY_SOURCE)
    for path in PACKAGE.rglob("*.py"):
        name = _module_name(path)
        if any(part.startswith("_") for part in name.split(".")[1:]):
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
