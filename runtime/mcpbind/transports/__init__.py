"""Transports: move whole JSON-RPC messages as bytes; they never parse JSON.

The in-memory pair (its anyio streams are only needed for an in-process server) and stdio
(asyncio, subprocess: only to spawn or serve) are imported on first use. The imports below are
the one list of the public names (``mcpbind._lazy.lazy_package``).
"""

from typing import TYPE_CHECKING

from .base import MessagePump as MessagePump
from .base import MessageTooLarge as MessageTooLarge
from .base import Transport as Transport
from .base import TransportClosed as TransportClosed

if TYPE_CHECKING:
    from .memory import MemoryTransport as MemoryTransport
    from .memory import memory_pair as memory_pair
    from .stdio import DEFAULT_MAX_MESSAGE_SIZE as DEFAULT_MAX_MESSAGE_SIZE
    from .stdio import INHERITED_ENV as INHERITED_ENV
    from .stdio import StdioClientTransport as StdioClientTransport
    from .stdio import StdioServerTransport as StdioServerTransport
else:
    from .._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
