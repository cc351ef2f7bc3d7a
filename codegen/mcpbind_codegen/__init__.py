"""The mcpbind schema-to-msgspec generator."""
