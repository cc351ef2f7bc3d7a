"""The SSE side of Streamable HTTP: one ``Stream`` per POST that returned SSE plus the
session's standalone GET stream, and the ``Outbox`` that feeds whichever HTTP response is
currently attached to a stream.

A stream outlives its connections: when a client drops (or the server closes a connection
to make it poll), messages keep their event ids, go to the event store and a small backlog,
and the next ``GET`` with ``Last-Event-ID`` picks the stream up where the client left off.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Final

from .events import format_event_id

__all__ = [
    "MAX_PENDING",
    "TIMEOUT",
    "SessionInbox",
    "Item",
    "Outbox",
    "OutboxOnDemand",
    "Stream",
    "Timeout",
    "sse_frame",
]

#: ``(n, message)``: ``n`` is the event's number in its stream (0: no id, no store).
Item = tuple[int, bytes]


class Timeout:
    __slots__ = ()


TIMEOUT: Final = Timeout()
"""Returned by ``Outbox.get`` when a keep-alive interval passed without a message."""


MAX_PENDING = 1024
"""Messages an ``Outbox`` holds for a connection that is not reading them. The standalone
GET stream's connection is ended past that: a client that stopped reading cannot make the
server buffer the session's notifications without bound; it reconnects (and resumes from the
event store, if there is one). A request's stream is never cut short (its response would be
lost): the handler sending to it waits for room instead (backpressure, :meth:`Outbox.room`),
as it would on a stdio pipe nobody reads."""


class Outbox:
    """A single-consumer queue of ``Item`` with close; asyncio only, and cheap. Bounded by
    ``limit`` if given: when full, ``put`` closes it (``blocking=False``) or the producer
    awaits :meth:`room` first (``blocking=True``)."""

    __slots__ = ("_items", "_room", "_waiter", "blocking", "closed", "limit", "retry_ms")

    def __init__(self, limit: int | None = None, *, blocking: bool = False) -> None:
        self._items: deque[Item] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._room: asyncio.Event | None = None  # producers waiting for room (blocking)
        self.closed = False
        self.limit = limit
        self.blocking = blocking
        #: Set by ``close(retry_ms=...)``: the writer ends with a ``retry`` field (polling).
        self.retry_ms: int | None = None

    def __len__(self) -> int:
        """Items queued and not yet taken by the writer."""
        return len(self._items)

    @property
    def full(self) -> bool:
        """A blocking outbox at its limit: the producer awaits :meth:`room` before ``put``."""
        limit = self.limit
        return self.blocking and not self.closed and limit is not None and len(self) >= limit

    async def room(self) -> None:
        """Until the writer has taken items below the limit, or the outbox is closed (the
        client left: what was queued is dropped, see :meth:`discard`)."""
        while self.full:
            if self._room is None:
                self._room = asyncio.Event()
            await self._room.wait()

    def _made_room(self) -> None:
        room = self._room
        if room is not None and not self.full:
            self._room = None
            room.set()

    def put(self, item: Item) -> bool:
        """Queue ``item``; ``False`` once closed, or when full and not blocking (which
        closes it). A blocking outbox takes it (its producer waited for :meth:`room`)."""
        if self.closed:
            return False
        if not self.blocking and self.limit is not None and len(self._items) >= self.limit:
            self.close()  # the writer sends what it has, then ends the response
            return False
        self._items.append(item)
        self._wake()
        return True

    def close(self, retry_ms: int | None = None) -> None:
        if not self.closed:
            self.closed = True
            self.retry_ms = retry_ms
            self._wake()
            self._made_room()

    def discard(self) -> None:
        """The writer is gone (the client left): close, and drop what it will never send."""
        self.close()
        self._items.clear()

    def _wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    def take(self) -> Item | None:
        """The next queued item, or ``None`` when none is queued (never waits)."""
        if not self._items:
            return None
        item = self._items.popleft()
        if self._room is not None:
            self._made_room()
        return item

    @property
    def drained(self) -> bool:
        """Closed, with nothing left to take: the writer ends the response."""
        return self.closed and not self._items

    async def get(self, timeout: float | None = None) -> Item | Timeout | None:
        """The next item; ``None`` once closed and drained; ``TIMEOUT`` after ``timeout``."""
        while not self._items:
            if self.closed:
                return None
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            handle = loop.call_later(timeout, _expire, waiter) if timeout is not None else None
            try:
                await waiter
            finally:
                self._waiter = None
                if handle is not None:
                    handle.cancel()
            if not self._items and not self.closed and handle is not None:
                return TIMEOUT
        item = self._items.popleft()
        if self._room is not None:
            self._made_room()
        return item


class OutboxOnDemand(Outbox):
    """An :class:`Outbox` nobody reads yet: the first item queued (or its closing) calls
    ``start`` once, which starts the writer that reads it. For a POST answered in its own
    task (:meth:`StreamableHTTPApp._sse_here`): a handler that emits nothing before its
    answer needs no writer task; one that emits gets its events written as they come."""

    __slots__ = ("start",)

    def __init__(self, start: Callable[[], None]) -> None:
        super().__init__(MAX_PENDING, blocking=True)
        self.start: Callable[[], None] | None = start

    def _wake(self) -> None:
        start, self.start = self.start, None
        if start is not None:
            start()
        super()._wake()


class SessionInbox:
    """A session's incoming POST bodies: a bounded single-consumer queue (asyncio) holding no
    buffers while empty, so an idle session costs a few hundred bytes less than with an
    ``asyncio.Queue`` (three deques). ``put`` waits while ``limit`` bodies are queued."""

    __slots__ = ("_getter", "_items", "_putters", "limit")

    def __init__(self, limit: int) -> None:
        self._items: list[bytes] = []
        self._getter: asyncio.Future[None] | None = None
        self._putters: list[asyncio.Future[None]] | None = None
        self.limit = limit

    def put_nowait(self, item: bytes) -> None:
        """Queue ``item``; ``asyncio.QueueFull`` when ``limit`` bodies are waiting."""
        if len(self._items) >= self.limit:
            raise asyncio.QueueFull
        self._items.append(item)
        self.wake()

    async def put(self, item: bytes) -> None:
        while len(self._items) >= self.limit:
            waiter = asyncio.get_running_loop().create_future()
            if self._putters is None:
                self._putters = []
            self._putters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._putters:
                    self._putters.remove(waiter)
        self.put_nowait(item)

    async def get(self) -> bytes:
        while not self._items:
            await self.wait()
        return self._take()

    def pop(self) -> bytes | None:
        """The next item, or ``None`` when none is queued (never waits)."""
        return self._take() if self._items else None

    async def wait(self) -> None:
        """Until an item is queued or :meth:`wake` is called."""
        waiter = self._getter = asyncio.get_running_loop().create_future()
        try:
            await waiter
        finally:
            self._getter = None

    def wake(self) -> None:
        """End the current :meth:`wait` (if any) without an item."""
        getter = self._getter
        if getter is not None and not getter.done():
            getter.set_result(None)

    def _take(self) -> bytes:
        item = self._items.pop(0)
        while self._putters:  # wake the first putter still waiting (a cancelled one is done)
            putter = self._putters.pop(0)
            if not putter.done():
                putter.set_result(None)
                break
        return item


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class Stream:
    """One logical SSE stream of a session (or the collector of a JSON-mode POST)."""

    __slots__ = ("_backlog", "_limit", "done", "id", "json", "n", "outbox", "pending", "standalone")

    def __init__(
        self,
        stream_id: str,
        *,
        pending: set[int | str] | None = None,
        json: bool = False,
        standalone: bool = False,
        backlog: int = 256,
    ) -> None:
        self.id = stream_id
        #: Request ids whose responses this stream still owes.
        self.pending: set[int | str] = pending if pending is not None else set()
        self.json = json
        self.standalone = standalone
        self.n = 0
        self.done = False
        self.outbox: Outbox | None = None
        self._backlog: deque[Item] | None = None
        self._limit = backlog

    @property
    def backlog(self) -> deque[Item]:
        """What was sent while no connection was attached, for the next one (bounded;
        created when first needed: most streams never have one)."""
        if self._backlog is None:
            self._backlog = deque(maxlen=self._limit)
        return self._backlog

    def take_backlog(self) -> deque[Item] | tuple[()]:
        """The backlog, emptied from the stream."""
        backlog, self._backlog = self._backlog, None
        return backlog if backlog is not None else ()


def sse_frame(stream_id: str, n: int, message: bytes) -> bytes:
    """One SSE ``message`` event; with ``id`` when the event is resumable (``n`` > 0)."""
    if b"\n" in message or b"\r" in message:  # never from our encoder; keep the framing safe
        message = b"\ndata: ".join(
            message.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        )
    if n:
        return b"id: %s\nevent: message\ndata: %s\n\n" % (
            format_event_id(stream_id, n).encode(),
            message,
        )
    return b"event: message\ndata: %s\n\n" % message
