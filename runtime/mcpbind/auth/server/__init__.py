"""The resource-server side of MCP authorization: a bearer-token check for the Streamable HTTP
app (:class:`ResourceServer`), token verifiers (:class:`JWTVerifier` over a JWKS,
:class:`IntrospectionVerifier` for RFC 7662), and the :class:`Principal` handlers receive.

>>> from mcpbind.auth.server import JWTVerifier, ResourceServer
>>> auth = ResourceServer(
...     JWTVerifier("https://auth.example.com/jwks", issuer="https://auth.example.com"),
...     resource="https://mcp.example.com/mcp",
...     authorization_servers=["https://auth.example.com"],
... )
>>> # StreamableHTTPApp(server, auth=auth)  or  serve_http(server, auth=auth)

joserfc (the ``auth`` extra) is imported when the first JWT is checked, not before.
"""

from __future__ import annotations

from ...server.principal import Principal, current_principal
from .bearer import ResourceServer, metadata_path
from .dpop import DPoPChecker, InvalidProof
from .introspection import IntrospectionVerifier
from .jwt import JWTVerifier
from .verifier import InvalidToken, TokenVerifier, VerifierUnavailable

__all__ = [
    "DPoPChecker",
    "IntrospectionVerifier",
    "InvalidProof",
    "InvalidToken",
    "JWTVerifier",
    "Principal",
    "ResourceServer",
    "TokenVerifier",
    "VerifierUnavailable",
    "current_principal",
    "metadata_path",
]
