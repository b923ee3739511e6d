"""The billing example: an MCP server over a seeded SQLite database of invoices."""
