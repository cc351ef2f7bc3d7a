"""mcpbind: a fast, strictly typed MCP SDK."""
