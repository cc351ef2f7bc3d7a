"""One server on many workers: what each worker shares through Redis (see
docs/guides/deployment.md). ``serve_http(..., redis=URL)`` and ``mcpbind serve --redis``
build it; an application mounting ``StreamableHTTPApp`` itself can too."""

from __future__ import annotations

import os
from typing import Any, Final

from ...server.app import Server

__all__ = ["REDIS_URL_VARIABLE", "RedisCluster", "redis_url"]

REDIS_URL_VARIABLE: Final = "MCPBIND_REDIS_URL"


def redis_url(explicit: str | None = None) -> str | None:
    """``explicit``, else ``MCPBIND_REDIS_URL`` from the environment (so an unchanged server
    script joins a cluster by its environment), else ``None`` (one process, in memory)."""
    return explicit or os.environ.get(REDIS_URL_VARIABLE) or None


class RedisCluster:
    """A worker's share of the Redis at ``url``: the event store (resumable streams), the
    notification bus and the session registry, which names this worker by ``advertise``
    (its MCP URL as the other workers reach it)."""

    def __init__(self, server: Server, url: str, advertise: str) -> None:
        from .redis_bus import RedisNotificationBus
        from .redis_events import RedisEventStore
        from .redis_sessions import RedisSessionRegistry

        self.event_store = RedisEventStore(url)
        self.bus = RedisNotificationBus(server, url)
        self.registry = RedisSessionRegistry(url, advertise)

    def app_options(self) -> dict[str, Any]:
        """The ``StreamableHTTPApp`` keywords that make it a worker of the cluster."""
        return {"event_store": self.event_store, "bus": self.bus, "registry": self.registry}

    async def ready(self) -> bool:
        """Readiness: Redis answers."""
        return await self.registry.reachable()
