"""The OAuth 2.1 client of MCP authorization: pass one to ``auth=``.

    from mcpbind import Client
    from mcpbind.auth.client import OAuth, LoopbackRedirect, FileTokenStore

    auth = OAuth(redirect_handler=LoopbackRedirect(), token_store=FileTokenStore())
    async with Client("https://example.com/mcp", auth=auth) as client: ...

Needs the ``auth`` extra (joserfc, for private_key_jwt and DPoP) and ``http`` (httpx2).
"""

from typing import TYPE_CHECKING

from ._flows import ClientCredentials as ClientCredentials
from ._flows import EnterpriseManaged as EnterpriseManaged
from ._flows import JwtBearer as JwtBearer
from ._flows import OAuth as OAuth
from ._provider import OAuthBase as OAuthBase
from ._redirect import HeadlessRedirect as HeadlessRedirect
from ._redirect import LoopbackRedirect as LoopbackRedirect
from ._redirect import RedirectHandler as RedirectHandler
from .errors import AuthError as AuthError
from .store import ClientInfo as ClientInfo
from .store import FileTokenStore as FileTokenStore
from .store import InMemoryTokenStore as InMemoryTokenStore
from .store import Tokens as Tokens
from .store import TokenStore as TokenStore

if not TYPE_CHECKING:  # ``__all__`` and ``dir()``: the imports above are the list
    from ..._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
