"""All of HTTP: the Streamable HTTP server (``mcpbind.http.server``: an ASGI application,
resumable SSE streams, sessions, the 2024-11-05 HTTP+SSE endpoint) and client
(``mcpbind.http.client``: ``StreamableHTTPTransport`` with its HTTP+SSE fallback).

The names below are imported on first use, so a client does not load the server side and
``import mcpbind.http`` costs nothing.

>>> from mcpbind.http import StreamableHTTPApp, serve_http, connect_http
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

if TYPE_CHECKING:
    from .client import (
        LegacySSETransport,
        LegacyUnavailable,
        StreamableHTTPTransport,
        connect_http,
    )
    from .server import (
        EventStore,
        HostPolicy,
        HttpSession,
        InMemoryEventStore,
        LegacySSEApp,
        StreamableHTTPApp,
        WithLegacySSE,
        close_sse_stream,
        current_http_session,
        scope_principal,
        serve_http,
        streamable_http_app,
        with_legacy_sse,
    )

_CLIENT = ("LegacySSETransport", "LegacyUnavailable", "StreamableHTTPTransport", "connect_http")
_SERVER = (
    "EventStore",
    "HostPolicy",
    "HttpSession",
    "InMemoryEventStore",
    "LegacySSEApp",
    "StreamableHTTPApp",
    "WithLegacySSE",
    "close_sse_stream",
    "current_http_session",
    "scope_principal",
    "serve_http",
    "streamable_http_app",
    "with_legacy_sse",
)
_LAZY = {
    **dict.fromkeys(_CLIENT, ".client"),
    **dict.fromkeys(_SERVER, ".server"),
}

__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "EventStore",
    "HostPolicy",
    "HttpSession",
    "InMemoryEventStore",
    "LegacySSEApp",
    "LegacySSETransport",
    "LegacyUnavailable",
    "StreamableHTTPApp",
    "StreamableHTTPTransport",
    "WithLegacySSE",
    "close_sse_stream",
    "connect_http",
    "current_http_session",
    "scope_principal",
    "serve_http",
    "streamable_http_app",
    "with_legacy_sse",
]
