"""Interop tests: mcpbind against the official MCP Python SDK (``mcp``), both directions, over stdio."""
