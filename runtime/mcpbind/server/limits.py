"""Bounds shared by every connection of one ``Server`` (issue 16: what peers can make it hold).

Per connection, ``SessionOptions.max_inflight`` bounds the requests being handled at once; a
server's sessions together are bounded by :data:`MAX_SERVER_INFLIGHT` (adjust with
``server_inflight(server).limit = n``). Beyond either, a request is answered "Server busy"
(-32603; HTTP 503 on the stateless era) at once, and nothing runs for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..runner import InflightLimit

if TYPE_CHECKING:
    from .app import Server

__all__ = ["MAX_SERVER_INFLIGHT", "server_inflight", "server_inflight_limit"]

MAX_SERVER_INFLIGHT = 512
"""Inbound requests in flight across all sessions of one ``Server``."""


def server_inflight_limit() -> InflightLimit:
    """A new server's count, bounded by :data:`MAX_SERVER_INFLIGHT`."""
    return InflightLimit(MAX_SERVER_INFLIGHT)


def server_inflight(server: Server) -> InflightLimit:
    """The count of requests in flight shared by every session of ``server``."""
    return server.inflight
