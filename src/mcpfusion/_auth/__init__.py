"""HTTP authorization without the MCP SDK: ``Auth``, API keys, the JWT and introspection
verifiers.
"""
