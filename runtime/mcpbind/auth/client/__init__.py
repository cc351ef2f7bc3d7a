"""The OAuth 2.1 client of MCP authorization: pass one to ``auth=``.

    from mcpbind import Client
    from mcpbind.auth.client import OAuth, LoopbackRedirect, FileTokenStore

    auth = OAuth(redirect_handler=LoopbackRedirect(), token_store=FileTokenStore())
    async with Client("https://example.com/mcp", auth=auth) as client: ...

Needs the ``auth`` extra (joserfc, for private_key_jwt and DPoP) and ``http`` (httpx2).
"""

from .errors import AuthError
from .flows import ClientCredentials, EnterpriseManaged, JwtBearer, OAuth
from .provider import OAuthBase
from .redirect import HeadlessRedirect, LoopbackRedirect, RedirectHandler
from .store import ClientInfo, FileTokenStore, InMemoryTokenStore, Tokens, TokenStore

__all__ = [
    "AuthError",
    "ClientCredentials",
    "ClientInfo",
    "EnterpriseManaged",
    "FileTokenStore",
    "HeadlessRedirect",
    "InMemoryTokenStore",
    "JwtBearer",
    "LoopbackRedirect",
    "OAuth",
    "OAuthBase",
    "RedirectHandler",
    "TokenStore",
    "Tokens",
]
