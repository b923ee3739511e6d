"""Adapters serving an mcpfusion app through an MCP SDK; the only place that imports one."""

from mcpfusion.adapters.mcp_server import (
    ServableApp,
    asgi_app,
    build_server,
    is_loopback,
    run_http,
    run_stdio,
    serve_stdio,
    to_call_tool_result,
    transport_security,
)

__all__ = [
    "ServableApp",
    "asgi_app",
    "build_server",
    "is_loopback",
    "run_http",
    "run_stdio",
    "serve_stdio",
    "to_call_tool_result",
    "transport_security",
]
