"""mcpbind: a fast, strictly typed Model Context Protocol SDK generated from the official schema.

The types are ``mcpbind.types`` (the generated unified superset of every protocol version,
with ``UNSET`` for absent optional fields).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpbind_types._common import RequestOptions, json_object, json_value

from . import types
from .client import Client, ClientHandlers, Subscription, UnsupportedVersion
from .connection import ConnectionClosed, PeerError, RequestTimeout
from .protocol import McpError, UrlElicitationRequired
from .server import Context, Server, ToolExecutionError, serve, serve_stdio
from .server.options import CacheHint, StatelessOptions
from .versions import (
    AUTO,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    LATEST_STATELESS,
    STATELESS_VERSIONS,
)

if TYPE_CHECKING:  # the Host is imported on first use: a client or server alone never needs it
    from .host import (
        ApprovalPolicy,
        Host,
        HostConfig,
        SamplingReview,
        ServerConfig,
        ToolCallRequest,
    )

_HOST = frozenset(
    ("ApprovalPolicy", "Host", "HostConfig", "SamplingReview", "ServerConfig", "ToolCallRequest")
)


def __getattr__(name: str) -> Any:
    if name in _HOST:
        from . import host

        return getattr(host, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AUTO",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE",
    "LATEST_STATELESS",
    "STATELESS_VERSIONS",
    "CacheHint",
    "StatelessOptions",
    "Subscription",
    "ApprovalPolicy",
    "Host",
    "HostConfig",
    "SamplingReview",
    "ServerConfig",
    "ToolCallRequest",
    "Client",
    "ClientHandlers",
    "ConnectionClosed",
    "Context",
    "McpError",
    "PeerError",
    "RequestOptions",
    "RequestTimeout",
    "Server",
    "ToolExecutionError",
    "UnsupportedVersion",
    "UrlElicitationRequired",
    "serve",
    "serve_stdio",
    "json_object",
    "json_value",
    "types",
]
