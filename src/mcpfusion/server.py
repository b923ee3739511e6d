"""Serving an app through the official MCP SDK: stdio, streamable HTTP, or an ASGI app.

``Fusion.run`` and ``Fusion.asgi_app`` are the usual way in; this module is for embedding:
``build_server(app)`` is the SDK ``Server`` answering from the app, to combine with
hand-written SDK handlers or run on a transport of your own.
"""

from __future__ import annotations

from mcpfusion._guard import HostPolicy
from mcpfusion._http import asgi_app, host_policy, is_loopback, run_http
from mcpfusion._options import HttpOptions
from mcpfusion._sdk import ServableApp, build_server, to_call_tool_result
from mcpfusion._stdio import run_stdio, serve_stdio

__all__ = [
    "HostPolicy",
    "HttpOptions",
    "ServableApp",
    "asgi_app",
    "build_server",
    "host_policy",
    "is_loopback",
    "run_http",
    "run_stdio",
    "serve_stdio",
    "to_call_tool_result",
]
