"""uvicorn's server with the shutdown an MCP application needs (``serve_http`` runs it).

uvicorn, on SIGTERM, stops accepting, waits for the requests still running (at most
``timeout_graceful_shutdown``), then runs the lifespan shutdown. An SSE stream never ends by
itself, so the application has to act first, between the two:

- one of several workers (a ``bus`` or ``registry``: ``StreamableHTTPApp.hand_back``): its
  long-lived streams end, so their clients reconnect through the balancer to the other
  workers and resume there; the requests in flight then run to their answers, within the
  timeout; the sessions end last;
- a server on its own: the sessions end first (their streams close, their handlers are
  cancelled), then the other requests get the timeout, as before workers existed.
"""

from __future__ import annotations

import socket
from typing import Protocol

import uvicorn

__all__ = ["Drainable", "DrainingServer"]


class Drainable(Protocol):
    """What :class:`DrainingServer` asks of the application it stops."""

    def hand_back(self) -> bool:
        """End the long-lived streams so their clients go elsewhere; ``False``: nowhere to
        go (one process), nothing done."""
        ...

    async def aclose(self) -> None:
        """End every session."""
        ...


class DrainingServer(uvicorn.Server):
    """``uvicorn.Server`` serving ``config.app``, which wraps (or is) ``app``."""

    def __init__(self, config: uvicorn.Config, app: Drainable) -> None:
        super().__init__(config)
        self.mcp_app = app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for listener in self.servers:  # no new connection from here on
            listener.close()
        if self.mcp_app.hand_back():
            await super().shutdown(sockets)  # the requests in flight finish (within the timeout)
            await self.mcp_app.aclose()
        else:
            await self.mcp_app.aclose()
            await super().shutdown(sockets)
