"""Streamable HTTP server transport: an ASGI application, resumable SSE streams, sessions; and
the 2024-11-05 HTTP+SSE transport beside it for old clients (``LegacySSEApp``).

>>> from mcpbind.http.server import StreamableHTTPApp, serve_http, with_legacy_sse
"""

from __future__ import annotations

from .events import EventStore, InMemoryEventStore
from .http_session import HttpSession, close_sse_stream, current_http_session
from .legacy_sse_app import LegacySSEApp, WithLegacySSE, with_legacy_sse
from .security import HostPolicy
from .serve import serve_http
from .streamable_app import StreamableHTTPApp, scope_principal, streamable_http_app

__all__ = [
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
]
