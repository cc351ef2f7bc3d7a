"""``RedisEventStore``: the SSE events of resumable streams kept in Redis, so every worker of
one server reads the same history (a resume, ``GET`` + ``Last-Event-ID``, replays from it).

Uses redis-py's asyncio client (``pip install mcpbind[redis]``; imported when the store is
made, never by ``import mcpbind``). A stream is one list, ``<prefix>:events:<stream id>``, of
``b"<n> <message>"`` entries in event order, trimmed to the last ``max_events`` and expiring
``ttl`` seconds after its last write, so Redis drops an abandoned stream itself (no sweeper).

Written behind, never in the way of delivery (Streamable HTTP, "Resumability and
Redelivery": a server *may* replay; what it must not do is lose the live stream). An event is
kept in memory at once and sent live by the session; one writer task per store then sends
every stream's waiting events to Redis in one pipelined round trip (``RPUSH`` of the batch,
``LTRIM``, ``PEXPIRE`` per stream), the next round gathering what came meanwhile. A stream
that ends before its round (most tool calls: a result and done) is dropped from memory and
never reaches Redis at all. When Redis is slow or down, the round fails after ``timeout``
and is tried again (backing off up to 2 s); meanwhile the events wait in memory, at most
``max_events`` a stream (the oldest dropped, as Redis would trim them), and a resume reads
them there, so a flooding client or a Redis hiccup costs neither the stream nor the session.
A round whose reply was lost may have been applied: entries read back are taken in event
order, each number once, so a retried write never delivers an event twice.

Event numbers of a stream are consecutive (see :mod:`.events`), so the history tells a gap
(events trimmed away) and a cursor from the future apart from a plain replay. A stream the
session forgets (it ended, or its session did) is deleted in the next round.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

__all__ = ["RedisEventStore"]

logger = logging.getLogger("mcpbind.http")

_BACKOFF_MAX = 2.0
_YIELD_AT = 100  # events of one stream waiting for Redis past which each store yields once


class RedisEventStore:
    """The :class:`~mcpbind.http.server.events.EventStore` of the Redis at ``url``
    (``redis://host:port/db``), keys under ``prefix``: at most ``max_events`` per stream (the
    oldest dropped), a stream forgotten ``ttl`` seconds after its last event (sooner when its
    session ends: deleted). ``timeout``: seconds one Redis round trip may take before it
    fails (and, for a write, is tried again)."""

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "mcpbind",
        max_events: int = 1000,
        ttl: float = 600.0,
        timeout: float = 0.5,
    ) -> None:
        import redis.asyncio

        if max_events < 1 or ttl <= 0:
            raise ValueError("max_events must be at least 1 and ttl positive")
        self.max_events = max_events
        self.ttl = ttl
        self.timeout = timeout
        self._redis: Any = redis.asyncio.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        self._prefix = prefix
        self._ttl_ms = int(ttl * 1000)
        #: Per stream, its events not yet sent to Redis, in event order.
        self._pending: dict[str, list[tuple[int, bytes]]] = {}
        #: The round being written now (kept readable until Redis has it).
        self._writing: dict[str, list[tuple[int, bytes]]] = {}
        #: Streams with events sent to Redis (or being sent): a forgotten one needs a ``DEL``.
        self._stored: set[str] = set()
        #: Streams to delete in the next round, and those the round in flight deletes.
        self._doomed: set[str] = set()
        self._deleting: set[str] = set()
        self._writer: asyncio.Task[None] | None = None
        self._failing = False  # the last round failed (logged once until one succeeds)

    def _key(self, stream_id: str) -> str:
        return f"{self._prefix}:events:{stream_id}"

    def _errors(self) -> tuple[type[Exception], ...]:
        import redis.exceptions

        return (redis.exceptions.RedisError, OSError)

    @property
    def backlog(self) -> int:
        """Events kept in memory, not yet in Redis (for metrics and tests)."""
        return sum(map(len, self._pending.values())) + sum(map(len, self._writing.values()))

    async def store_event(self, stream_id: str, n: int, message: bytes) -> None:
        # Never waits for Redis: the session sends the event live right after this.
        pending = self._pending.get(stream_id)
        if pending is None:
            pending = self._pending[stream_id] = []
        pending.append((n, message))
        if len(pending) > self.max_events:
            del pending[0]  # as LTRIM would; a resume from before it is refused (a gap)
        self._kick()
        if len(pending) >= _YIELD_AT:
            # Redis is behind this stream: a handler emitting in a loop to a connection that
            # is gone (so nothing else makes it wait) lets the writer and the other requests
            # run between its events, as a write awaited here used to.
            await asyncio.sleep(0)

    def _kick(self) -> None:
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write_behind())

    async def _write_behind(self) -> None:
        """Send what waits, a round at a time, until nothing does; on failure, again later."""
        delay = 0.05
        try:
            while self._pending or self._doomed:
                batch, self._pending = self._pending, {}
                doomed, self._doomed = self._doomed, set()
                self._writing, self._deleting = batch, doomed
                self._stored.update(batch)
                try:
                    await self._write(batch, doomed)
                except self._errors() as exc:
                    self._requeue(batch, doomed)
                    self._writing, self._deleting = {}, set()  # back in _pending/_doomed
                    if not self._failing:
                        self._failing = True
                        logger.warning(
                            "event store: Redis write failed (%s); %d events kept in memory "
                            "and sent live, retrying",
                            exc or type(exc).__name__,
                            self.backlog,
                        )
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, _BACKOFF_MAX)
                    continue
                finally:
                    self._writing, self._deleting = {}, set()
                if self._failing:
                    self._failing = False
                    logger.info("event store: Redis writes succeed again")
                delay = 0.05
        finally:
            self._writer = None

    async def _write(self, batch: dict[str, list[tuple[int, bytes]]], doomed: set[str]) -> None:
        if not batch and not doomed:
            return
        async with self._redis.pipeline(transaction=False) as pipe:
            for stream_id, events in batch.items():
                key = self._key(stream_id)
                pipe.rpush(key, *[b"%d " % n + message for n, message in events])
                pipe.ltrim(key, -self.max_events, -1)
                pipe.pexpire(key, self._ttl_ms)
            for stream_id in doomed:
                pipe.delete(self._key(stream_id))
            await pipe.execute()

    def _requeue(self, batch: dict[str, list[tuple[int, bytes]]], doomed: set[str]) -> None:
        """A failed round: its events go back before those that came meanwhile (a stream
        forgotten meanwhile stays forgotten), its deletions are done next time."""
        for stream_id, events in batch.items():
            if stream_id not in self._stored:
                continue  # forgotten during the round: its DEL is queued
            later = self._pending.get(stream_id)
            merged = events + later if later else events
            self._pending[stream_id] = merged[-self.max_events :]
        self._doomed |= doomed

    async def events_after(self, stream_id: str, n: int) -> list[tuple[int, bytes]] | None:
        if stream_id in self._doomed or stream_id in self._deleting:
            return [] if n == 0 else None  # forgotten: as if it never had an event
        # What memory holds before the read: a round may land in Redis and leave memory while
        # the read is in flight, after Redis answered it. Every event stored before this call is
        # either here or was in Redis before the read; a later one the resumed stream gets live.
        kept: dict[int, bytes] = dict(self._in_memory(stream_id))
        entries: list[bytes] | None
        try:
            entries = await self._redis.lrange(self._key(stream_id), 0, -1)
        except self._errors():
            entries = None
        if entries:
            for entry in entries:
                number, _, message = entry.partition(b" ")
                kept.setdefault(int(number), message)  # a retried write: each number once
        kept.update(self._in_memory(stream_id))  # and what came meanwhile (failed round: back)
        if entries is None:
            # Redis did not answer: only what is still in memory, if it covers the cursor.
            after = sorted(k for k in kept if k > n)
            if not after or after[0] != n + 1:
                raise _unavailable()
        if not kept:
            # Nothing kept: fine only for a client that has seen nothing but the priming
            # event (a stream that never had an event, or whose events all expired).
            return [] if n == 0 else None
        numbers = sorted(kept)
        if n > numbers[-1]:
            return None  # a cursor from the future: not an id this server sent
        after = [k for k in numbers if k > n]
        if after and (after[0] != n + 1 or after[-1] - after[0] != len(after) - 1):
            return None  # events between the cursor and the oldest kept one are gone
        return [(k, kept[k]) for k in after]

    def _in_memory(self, stream_id: str) -> list[tuple[int, bytes]]:
        """The stream's events not yet in Redis: the round being written, then those waiting."""
        return [*self._writing.get(stream_id, ()), *self._pending.get(stream_id, ())]

    async def forget_stream(self, stream_id: str) -> None:
        # Events still only in memory never reach Redis; a stream already sent (or being
        # sent) is deleted in the next round, after any write of it in flight.
        self._pending.pop(stream_id, None)
        if stream_id in self._stored:
            self._stored.discard(stream_id)
            self._doomed.add(stream_id)
            self._kick()

    async def flush(self) -> None:
        """Until every event stored so far is in Redis (waits through failed rounds)."""
        while (writer := self._writer) is not None:
            await asyncio.shield(writer)

    async def close(self) -> None:
        """Send what waits (one more round, bounded by ``timeout``), then disconnect."""
        writer = self._writer
        if writer is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(writer), 2 * self.timeout)
            if not writer.done():
                writer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await writer
        await self._redis.aclose()


def _unavailable() -> Exception:
    import redis.exceptions

    return redis.exceptions.ConnectionError("the event store's Redis does not answer")
