"""Authorization for MCP over HTTP: the OAuth client (`mcpbind.auth.client`) and the
resource-server checks (`mcpbind.auth.server`).

Kept empty on purpose: importing `mcpbind.auth` loads nothing; JOSE (joserfc) is
imported lazily by the modules that need it.
"""
