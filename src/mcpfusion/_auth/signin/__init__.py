"""Sign-in: an OAuth authorization server in front of an OpenID provider, for MCP clients."""
