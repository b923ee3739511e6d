"""Resources, prompts, completions, and the renderer as an MCP App."""
