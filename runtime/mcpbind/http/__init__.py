"""All of HTTP: the Streamable HTTP server (an ASGI application, resumable SSE streams,
sessions, the 2024-11-05 HTTP+SSE endpoint) and client (``StreamableHTTPTransport`` with its
HTTP+SSE fallback). Import them from here: ``mcpbind.http.server`` and ``mcpbind.http.client``
are where they live, not a separate API.

The names below are imported on first use, so a client does not load the server side and
``import mcpbind.http`` costs nothing. The imports below are the one list of the public names
(``mcpbind._lazy.lazy_package``).

>>> from mcpbind.http import StreamableHTTPApp, serve_http, connect_http
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .client import LegacySSETransport as LegacySSETransport
    from .client import LegacyUnavailable as LegacyUnavailable
    from .client import StreamableHTTPTransport as StreamableHTTPTransport
    from .client import connect_http as connect_http
    from .server import DrainingServer as DrainingServer
    from .server import EventStore as EventStore
    from .server import HostPolicy as HostPolicy
    from .server import HttpSession as HttpSession
    from .server import InMemoryEventStore as InMemoryEventStore
    from .server import LegacySSEApp as LegacySSEApp
    from .server import RedisCluster as RedisCluster
    from .server import RedisEventStore as RedisEventStore
    from .server import RedisNotificationBus as RedisNotificationBus
    from .server import RedisSessionRegistry as RedisSessionRegistry
    from .server import StreamableHTTPApp as StreamableHTTPApp
    from .server import WithLegacySSE as WithLegacySSE
    from .server import close_sse_stream as close_sse_stream
    from .server import current_http_session as current_http_session
    from .server import scope_principal as scope_principal
    from .server import serve_http as serve_http
    from .server import streamable_http_app as streamable_http_app
    from .server import with_legacy_sse as with_legacy_sse
else:
    from .._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
