"""The stdio transport: the line pipes and the session."""
