"""Tool definitions up to ``tools/list``, and what a handler receives (its context and client
channel; no MCP SDK).
"""
