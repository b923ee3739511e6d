"""Serving: options, JSON-RPC, the mapping onto the MCP SDK, the hot paths, the transports and
Redis (with ``integrations``, the only package importing the SDK).
"""
