"""``RedisEventStore``: the SSE events of resumable streams kept in Redis, so every worker of
one server reads the same history (a resume, ``GET`` + ``Last-Event-ID``, replays from it).

Uses redis-py's asyncio client (``pip install mcpbind[redis]``; imported when the store is
made, never by ``import mcpbind``). A stream is one list, ``<prefix>:events:<stream id>``, of
``b"<n> <message>"`` entries in event order: each write appends, trims the list to the last
``max_events`` and renews its expiry (``ttl`` seconds after the stream's last event), in one
``MULTI``, so Redis drops an abandoned stream itself (no sweeper). Event numbers of a stream
are consecutive (see :mod:`.events`), so the list tells a gap (events trimmed away) and a
cursor from the future apart from a plain replay. Every call waits at most ``timeout``
seconds for Redis, then raises (``redis.exceptions.TimeoutError``): never a hang.
A stream whose events all expired reads as one that never had any; a stream the session no
longer tracks (delivered to its end) stays until its ``ttl``.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["RedisEventStore"]


class RedisEventStore:
    """The :class:`~mcpbind.http.server.events.EventStore` of the Redis at ``url``
    (``redis://host:port/db``), keys under ``prefix``: at most ``max_events`` per stream (the
    oldest dropped), a stream forgotten ``ttl`` seconds after its last event."""

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "mcpbind",
        max_events: int = 1000,
        ttl: float = 3600.0,
        timeout: float = 0.5,
    ) -> None:
        import redis.asyncio

        if max_events < 1 or ttl <= 0:
            raise ValueError("max_events must be at least 1 and ttl positive")
        self.max_events = max_events
        self.ttl = ttl
        self._redis: Any = redis.asyncio.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        self._prefix = prefix
        self._ttl_ms = int(ttl * 1000)
        #: Per stream: the lock that keeps its writes in event order, and how many hold or
        #: wait for it (the entry goes when none do).
        self._writing: dict[str, tuple[asyncio.Lock, list[int]]] = {}

    def _key(self, stream_id: str) -> str:
        return f"{self._prefix}:events:{stream_id}"

    async def store_event(self, stream_id: str, n: int, message: bytes) -> None:
        # A session numbers an event, then stores it, then sends it; two handlers emitting
        # on one stream could otherwise reach Redis (and the client) out of order. The lock
        # is FIFO and taken in numbering order (nothing yields in between), so they cannot.
        entry = self._writing.get(stream_id)
        if entry is None:
            entry = self._writing[stream_id] = (asyncio.Lock(), [0])
        lock, users = entry
        users[0] += 1
        try:
            async with lock:
                key = self._key(stream_id)
                async with self._redis.pipeline(transaction=True) as pipe:
                    pipe.rpush(key, b"%d " % n + message)
                    pipe.ltrim(key, -self.max_events, -1)
                    pipe.pexpire(key, self._ttl_ms)
                    await pipe.execute()
        finally:
            users[0] -= 1
            if not users[0]:
                del self._writing[stream_id]

    async def events_after(self, stream_id: str, n: int) -> list[tuple[int, bytes]] | None:
        entries = await self._redis.lrange(self._key(stream_id), 0, -1)
        if not entries:
            # Nothing kept: fine only for a client that has seen nothing but the priming
            # event (a stream that never had an event, or whose events all expired).
            return [] if n == 0 else None
        events = []
        for entry in entries:
            number, _, message = entry.partition(b" ")
            events.append((int(number), message))
        if n > events[-1][0]:
            return None  # a cursor from the future: not an id this server sent
        if events[0][0] > n + 1:
            return None  # events between the cursor and the oldest kept one are gone
        return [(k, m) for k, m in events if k > n]

    async def forget_stream(self, stream_id: str) -> None:
        await self._redis.delete(self._key(stream_id))

    async def close(self) -> None:
        await self._redis.aclose()
