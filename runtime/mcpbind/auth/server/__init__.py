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

from typing import TYPE_CHECKING

from ...server.principal import Principal as Principal
from ...server.principal import current_principal as current_principal
from ._introspection import IntrospectionVerifier as IntrospectionVerifier
from ._jwt import JWTVerifier as JWTVerifier
from .bearer import ResourceServer as ResourceServer
from .bearer import metadata_path as metadata_path
from .dpop import DPoPChecker as DPoPChecker
from .dpop import InvalidProof as InvalidProof
from .verifier import InvalidToken as InvalidToken
from .verifier import TokenVerifier as TokenVerifier
from .verifier import VerifierUnavailable as VerifierUnavailable

if not TYPE_CHECKING:  # ``__all__`` and ``dir()``: the imports above are the list
    from ..._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
