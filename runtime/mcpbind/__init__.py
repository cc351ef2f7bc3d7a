"""mcpbind: a fast, strictly typed Model Context Protocol SDK generated from the official schema.

The types are ``mcpbind.types`` (the generated unified superset of every protocol version,
with ``UNSET`` for absent optional fields).
"""

from __future__ import annotations

from mcpbind_types._common import RequestOptions, json_object, json_value

from . import types
from .client import Client, ClientHandlers, Subscription, UnsupportedVersion
from .host import ApprovalPolicy, Host, HostConfig, SamplingReview, ServerConfig, ToolCallRequest
from .protocol import McpError, UrlElicitationRequired
from .server import Context, Server, ToolExecutionError, serve, serve_stdio
from .session import ConnectionClosed, PeerError, RequestTimeout
from .stateless import CacheHint, StatelessOptions
from .versions import (
    AUTO,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    LATEST_STATELESS,
    STATELESS_VERSIONS,
)

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
