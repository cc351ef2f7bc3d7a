"""The OAuth 2.1 client of MCP authorization: pass one to ``auth=``.

    from mcpbind import Client
    from mcpbind.auth.client import OAuth, LoopbackRedirect, FileTokenStore

    auth = OAuth(redirect_handler=LoopbackRedirect(), token_store=FileTokenStore())
    async with Client("https://example.com/mcp", auth=auth) as client: ...

Needs the ``auth`` extra (joserfc, for private_key_jwt and DPoP) and ``http`` (httpx2).
"""

from typing import TYPE_CHECKING

from .errors import AuthError as AuthError
from .flows import ClientCredentials as ClientCredentials
from .flows import EnterpriseManaged as EnterpriseManaged
from .flows import JwtBearer as JwtBearer
from .flows import OAuth as OAuth
from .provider import OAuthBase as OAuthBase
from .redirect import HeadlessRedirect as HeadlessRedirect
from .redirect import LoopbackRedirect as LoopbackRedirect
from .redirect import RedirectHandler as RedirectHandler
from .store import ClientInfo as ClientInfo
from .store import FileTokenStore as FileTokenStore
from .store import InMemoryTokenStore as InMemoryTokenStore
from .store import Tokens as Tokens
from .store import TokenStore as TokenStore

if not TYPE_CHECKING:  # ``__all__`` and ``dir()``: the imports above are the list
    from ..._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
