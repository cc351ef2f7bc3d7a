"""Resumability: where a session keeps the SSE events it sent, so a client that lost a stream
can resume it with ``GET`` + ``Last-Event-ID`` (Streamable HTTP, "Resumability and Redelivery").

Event ids are ``"<stream id>.<n>"``: the stream id is random and unique per stream, ``n`` counts
the events of that one stream from 1 (``0`` is the priming event, which carries no message).
So an id names its stream, a replay never crosses streams, and a gap is detectable.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Protocol

__all__ = ["EventStore", "InMemoryEventStore", "format_event_id", "parse_event_id"]


def format_event_id(stream_id: str, n: int) -> str:
    return f"{stream_id}.{n}"


def parse_event_id(event_id: str) -> tuple[str, int] | None:
    """``(stream id, n)`` of an id this server minted, ``None`` for anything else."""
    stream_id, dot, n = event_id.rpartition(".")
    if not dot or not stream_id or not (n.isascii() and n.isdigit()) or len(n) > 18:
        return None
    return stream_id, int(n)


class EventStore(Protocol):
    """Storage for sent SSE events (an in-memory one ships; plug in a shared one to resume
    across server processes)."""

    async def store_event(self, stream_id: str, n: int, message: bytes) -> None:
        """Keep event ``n`` (1, 2, ...) of ``stream_id``."""
        ...

    async def events_after(self, stream_id: str, n: int) -> list[tuple[int, bytes]] | None:
        """The events of ``stream_id`` after ``n``, oldest first; ``None`` when some of them are
        no longer kept (the client cannot resume without loss) or the stream is unknown."""
        ...

    async def forget_stream(self, stream_id: str) -> None:
        """The stream's session ended: its events can go."""
        ...


class InMemoryEventStore:
    """A bounded in-process store: at most ``max_events`` per stream (oldest dropped) and
    ``max_streams`` streams (least recently written dropped)."""

    def __init__(self, *, max_events: int = 1000, max_streams: int = 10_000) -> None:
        if max_events < 1 or max_streams < 1:
            raise ValueError("max_events and max_streams must be at least 1")
        self.max_events = max_events
        self.max_streams = max_streams
        self._streams: OrderedDict[str, deque[tuple[int, bytes]]] = OrderedDict()
        #: The highest ``n`` stored per stream, kept even once the events themselves expire.
        self._last: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._streams)

    async def store_event(self, stream_id: str, n: int, message: bytes) -> None:
        events = self._streams.get(stream_id)
        if events is None:
            events = self._streams[stream_id] = deque(maxlen=self.max_events)
            while len(self._streams) > self.max_streams:
                old, _ = self._streams.popitem(last=False)
                self._last.pop(old, None)
        else:
            self._streams.move_to_end(stream_id)
        events.append((n, message))
        self._last[stream_id] = n

    async def events_after(self, stream_id: str, n: int) -> list[tuple[int, bytes]] | None:
        events = self._streams.get(stream_id)
        if events is None:
            # Known only if nothing was ever stored for it and the cursor is the priming event.
            return [] if n == 0 and stream_id not in self._last else None
        if n > self._last.get(stream_id, 0):
            return None  # a cursor from the future: not an id we sent
        if events and events[0][0] > n + 1:
            return None  # events between the cursor and the oldest kept one are gone
        return [(k, m) for k, m in events if k > n]

    async def forget_stream(self, stream_id: str) -> None:
        self._streams.pop(stream_id, None)
        self._last.pop(stream_id, None)
