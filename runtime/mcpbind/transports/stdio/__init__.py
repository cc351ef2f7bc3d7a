"""stdio transport (2025-11-25 basic/transports.mdx §stdio, basic/lifecycle.mdx §Shutdown).

Messages are UTF-8 JSON texts, one per line. By role: :mod:`.framing` splits lines and applies
the size limit, :mod:`.fdio` reads and writes fds on the event loop for both ends,
:mod:`.server` is the server's end (stdin/stdout), :mod:`.process` the client's end (a spawned
server process).
"""

from typing import TYPE_CHECKING

from ..._lazy import lazy_attributes

if TYPE_CHECKING:  # each end imported on first use: a server never loads subprocess
    from .framing import DEFAULT_MAX_MESSAGE_SIZE, ByteSource, LineReader
    from .process import StdioClientTransport
    from .server import StdioServerTransport
    from .spawn import INHERITED_ENV

# framing too (it imports anyio, and anyio inspect): the CLI imports .spawn, a submodule of
# this package, to start a server before anything else (issue 15, cold start of mcpbind ls).
_LAZY = {
    "DEFAULT_MAX_MESSAGE_SIZE": ".framing",
    "ByteSource": ".framing",
    "LineReader": ".framing",
    "INHERITED_ENV": ".spawn",
    "StdioClientTransport": ".process",
    "StdioServerTransport": ".server",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "INHERITED_ENV",
    "ByteSource",
    "LineReader",
    "StdioClientTransport",
    "StdioServerTransport",
]
