"""The HTTP client transports: Streamable HTTP (``StreamableHTTPTransport``, ``connect_http``)
with a fallback to the 2024-11-05 HTTP+SSE transport (``LegacySSETransport``).

Users import these names from :mod:`mcpbind.http` (``mcpbind._api``):

>>> from mcpbind.http import connect_http
"""

from typing import TYPE_CHECKING

from ._transport import StreamableHTTPTransport as StreamableHTTPTransport
from ._transport import connect_http as connect_http
from .legacy_sse_transport import LegacySSETransport as LegacySSETransport
from .legacy_sse_transport import LegacyUnavailable as LegacyUnavailable

if not TYPE_CHECKING:  # ``__all__`` and ``dir()``: the imports above are the list
    from ..._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
