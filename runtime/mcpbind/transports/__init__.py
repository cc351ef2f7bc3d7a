"""Transports: move whole JSON-RPC messages as bytes; they never parse JSON."""

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes
from .base import MessagePump, MessageTooLarge, Transport, TransportClosed

if TYPE_CHECKING:  # imported on first use: the in-memory pair's anyio streams are only
    # needed for an in-process server; stdio (asyncio, subprocess) only to spawn or serve
    from .memory import MemoryTransport, memory_pair
    from .stdio import (
        DEFAULT_MAX_MESSAGE_SIZE,
        INHERITED_ENV,
        StdioClientTransport,
        StdioServerTransport,
    )

_LAZY = {
    "DEFAULT_MAX_MESSAGE_SIZE": ".stdio",
    "INHERITED_ENV": ".stdio",
    "StdioClientTransport": ".stdio",
    "StdioServerTransport": ".stdio",
    "MemoryTransport": ".memory",
    "memory_pair": ".memory",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "INHERITED_ENV",
    "MemoryTransport",
    "MessagePump",
    "MessageTooLarge",
    "StdioClientTransport",
    "StdioServerTransport",
    "Transport",
    "TransportClosed",
    "memory_pair",
]
