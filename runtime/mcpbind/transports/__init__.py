"""Transports: move whole JSON-RPC messages as bytes; they never parse JSON."""

from .base import MessageTooLarge, Transport, TransportClosed
from .memory import MemoryTransport, memory_pair
from .stdio import (
    DEFAULT_MAX_MESSAGE_SIZE,
    INHERITED_ENV,
    StdioClientTransport,
    StdioServerTransport,
)

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "INHERITED_ENV",
    "MemoryTransport",
    "MessageTooLarge",
    "StdioClientTransport",
    "StdioServerTransport",
    "Transport",
    "TransportClosed",
    "memory_pair",
]
