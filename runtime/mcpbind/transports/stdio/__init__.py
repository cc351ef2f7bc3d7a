"""stdio transport (2025-11-25 basic/transports.mdx §stdio, basic/lifecycle.mdx §Shutdown).

Messages are UTF-8 JSON texts, one per line. By role: :mod:`._framing` splits lines and applies
the size limit, :mod:`.fdio` reads and writes fds on the event loop for both ends,
:mod:`.server` is the server's end (stdin/stdout), :mod:`.process` the client's end (a spawned
server process).

Each end is imported on first use: a server never loads subprocess. So is framing (it imports
anyio, and anyio inspect): the CLI imports ``.spawn``, a submodule of this package, to start a
server before anything else (issue 15, cold start of ``mcpbind ls``). The imports below are the
one list of the public names (``mcpbind._lazy.lazy_package``).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._framing import DEFAULT_MAX_MESSAGE_SIZE as DEFAULT_MAX_MESSAGE_SIZE
    from ._framing import ByteSource as ByteSource
    from ._framing import LineReader as LineReader
    from .process import StdioClientTransport as StdioClientTransport
    from .server import StdioServerTransport as StdioServerTransport
    from .spawn import INHERITED_ENV as INHERITED_ENV
else:
    from ..._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
