"""stdio transport (2025-11-25 basic/transports.mdx §stdio, basic/lifecycle.mdx §Shutdown).

Messages are UTF-8 JSON texts, one per line. By role: :mod:`.framing` splits lines and applies
the size limit, :mod:`.fdio` reads and writes fds on the event loop for both ends,
:mod:`.server` is the server's end (stdin/stdout), :mod:`.process` the client's end (a spawned
server process).
"""

from .framing import DEFAULT_MAX_MESSAGE_SIZE, ByteSource, LineReader
from .process import INHERITED_ENV, StdioClientTransport
from .server import StdioServerTransport

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "INHERITED_ENV",
    "ByteSource",
    "LineReader",
    "StdioClientTransport",
    "StdioServerTransport",
]
