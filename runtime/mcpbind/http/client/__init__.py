"""The HTTP client transports: Streamable HTTP (``StreamableHTTPTransport``, ``connect_http``)
with a fallback to the 2024-11-05 HTTP+SSE transport (``LegacySSETransport``).

>>> from mcpbind.http.client import connect_http
"""

from __future__ import annotations

from .legacy_sse_transport import LegacySSETransport, LegacyUnavailable
from .transport import StreamableHTTPTransport, connect_http

__all__ = ["LegacySSETransport", "LegacyUnavailable", "StreamableHTTPTransport", "connect_http"]
