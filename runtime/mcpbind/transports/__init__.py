"""Transports: move whole JSON-RPC messages as bytes; they never parse JSON."""

from typing import TYPE_CHECKING, Any

from .base import MessagePump, MessageTooLarge, Transport, TransportClosed
from .stdio import (
    DEFAULT_MAX_MESSAGE_SIZE,
    INHERITED_ENV,
    StdioClientTransport,
    StdioServerTransport,
)

if TYPE_CHECKING:  # imported on first use: httpx2 is the optional "http" extra, and the
    # in-memory pair's anyio streams are only needed for an in-process server
    from .http import StreamableHTTPTransport, connect_http
    from .legacy_sse import LegacySSETransport, LegacyUnavailable
    from .memory import MemoryTransport, memory_pair

_LAZY = {
    "StreamableHTTPTransport": ".http",
    "connect_http": ".http",
    "LegacySSETransport": ".legacy_sse",
    "LegacyUnavailable": ".legacy_sse",
    "MemoryTransport": ".memory",
    "memory_pair": ".memory",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module, __name__), name)


__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "INHERITED_ENV",
    "LegacySSETransport",
    "LegacyUnavailable",
    "StreamableHTTPTransport",
    "connect_http",
    "MemoryTransport",
    "MessagePump",
    "MessageTooLarge",
    "StdioClientTransport",
    "StdioServerTransport",
    "Transport",
    "TransportClosed",
    "memory_pair",
]
