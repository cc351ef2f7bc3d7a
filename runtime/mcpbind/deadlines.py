"""Request deadlines in coarse buckets, watched by one task.

Giving every request its own cancel scope costs two scope transitions per call on the hot path.
Instead each pending request sits in a 10 ms bucket keyed by its deadline: arming and disarming
are a set insert and discard, and one sleeping task wakes only when the earliest bucket is due
(or when a request arrives with an earlier deadline than the one it sleeps towards). A request
that completes leaves an empty bucket behind that the watcher drops when it gets there.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

import anyio

from ._asyncio import Flag

__all__ = ["Deadlines"]

TICK = 0.01
K = TypeVar("K", bound=Hashable)


class Deadlines(Generic[K]):
    """``arm(key, deadline)``, ``disarm(key)``; ``run()`` calls ``on_expired(key)`` when due."""

    def __init__(self, on_expired: Callable[[K], None]) -> None:
        self._on_expired = on_expired
        self._buckets: dict[int, set[K]] = {}
        self._heap: list[int] = []
        self._where: dict[K, tuple[int, float]] = {}
        self._wake = Flag()
        self._target: int | None = None

    def arm(self, key: K, deadline: float) -> None:
        """Expire ``key`` at ``deadline`` (an ``anyio.current_time()`` value); re-arming moves it."""
        where = self._where
        if key in where:
            self.disarm(key)
        bucket = math.ceil(deadline / TICK)
        buckets = self._buckets
        members = buckets.get(bucket)
        if members is None:
            members = buckets[bucket] = set()
            heapq.heappush(self._heap, bucket)
        members.add(key)
        where[key] = (bucket, deadline)
        target = self._target
        if target is None or bucket < target:
            self._wake.set()

    def disarm(self, key: K) -> None:
        where = self._where.pop(key, None)
        if where is not None:
            members = self._buckets.get(where[0])
            if members is not None:
                members.discard(key)

    def deadline(self, key: K) -> float | None:
        where = self._where.get(key)
        return None if where is None else where[1]

    async def run(self) -> None:
        """The watcher task: runs until cancelled."""
        while True:
            heap, buckets = self._heap, self._buckets
            while heap and not buckets.get(heap[0]):
                buckets.pop(heapq.heappop(heap), None)
            if not heap:
                self._target = None
                await self._wait(None)
                continue
            bucket = heap[0]
            now = anyio.current_time()
            due = bucket * TICK
            if due > now:
                self._target = bucket
                await self._wait(due - now)
                continue
            heapq.heappop(heap)
            for key in buckets.pop(bucket, ()):
                where = self._where.get(key)
                if where is not None and where[0] == bucket:
                    del self._where[key]
                    self._on_expired(key)

    async def _wait(self, seconds: float | None) -> None:
        if seconds is None:
            await self._wake.wait()
        else:
            with anyio.move_on_after(seconds):
                await self._wake.wait()
        if self._wake.is_set():
            self._wake = Flag()
