"""Streamable HTTP server transport: an ASGI application, resumable SSE streams, sessions; and
the 2024-11-05 HTTP+SSE transport beside it for old clients (``LegacySSEApp``).

Users import these names from :mod:`mcpbind.http` (``mcpbind._api``):

>>> from mcpbind.http import StreamableHTTPApp, serve_http, with_legacy_sse
"""

from typing import TYPE_CHECKING

from .events import EventStore as EventStore
from .events import InMemoryEventStore as InMemoryEventStore
from .http_session import HttpSession as HttpSession
from .http_session import close_sse_stream as close_sse_stream
from .http_session import current_http_session as current_http_session
from .legacy_sse_app import LegacySSEApp as LegacySSEApp
from .legacy_sse_app import WithLegacySSE as WithLegacySSE
from .legacy_sse_app import with_legacy_sse as with_legacy_sse
from .security import HostPolicy as HostPolicy
from .serve import serve_http as serve_http
from .streamable_app import StreamableHTTPApp as StreamableHTTPApp
from .streamable_app import scope_principal as scope_principal
from .streamable_app import streamable_http_app as streamable_http_app

if TYPE_CHECKING:  # imported on first use: the many-workers machinery (redis, on demand)
    from .cluster import RedisCluster as RedisCluster
    from .draining import DrainingServer as DrainingServer
    from .redis_bus import RedisNotificationBus as RedisNotificationBus
    from .redis_events import RedisEventStore as RedisEventStore
    from .redis_sessions import RedisSessionRegistry as RedisSessionRegistry

if not TYPE_CHECKING:  # ``__all__`` and ``dir()``: the imports above are the list
    from ..._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
