"""``Flag``: an event that costs no waiter queue until a task waits on it.

``anyio.Event`` builds its backend's event (on asyncio: an ``asyncio.Event`` with its deque of
waiters, about 0.8 KB) up front. A per-session flag that is mostly only set and read (has the
client finished the handshake? is a deadline due earlier?) builds it on the first ``wait``.
"""

from __future__ import annotations

import anyio

__all__ = ["Flag"]


class Flag:
    """``set()``, ``is_set()`` and ``await wait()``, like ``anyio.Event``."""

    __slots__ = ("_event", "_set")

    def __init__(self) -> None:
        self._set = False
        self._event: anyio.Event | None = None

    def set(self) -> None:
        self._set = True
        if self._event is not None:
            self._event.set()

    def is_set(self) -> bool:
        return self._set

    async def wait(self) -> None:
        if self._event is None:
            self._event = anyio.Event()
            if self._set:
                self._event.set()
        await self._event.wait()
