"""Adopting mcpfusion in an existing server, one tool at a time.

``mcpfusion.integrations.sdk`` works with the official SDK's ``MCPServer`` and low-level
``Server``; ``mcpfusion.integrations.fastmcp`` with FastMCP (the ``mcpfusion[fastmcp]``
extra). Each module imports its framework, so import the one you use.
"""

__all__: list[str] = []
