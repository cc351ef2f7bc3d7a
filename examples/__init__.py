"""Small, real MCP servers built with mcpbind (run one with ``python -m examples.<name>``)."""
