"""Coarse per-request timers of the HTTP server on one shared clock.

Every POST arms two timers that almost never fire: the deadline of its body read (seconds) and,
on the 2026-07-28 era and the sessionless mode, the delay after which the request starts
watching for its client leaving (:data:`~.per_request.WATCH_AFTER`). A timer per request
(``loop.call_later``, ``asyncio.timeout``) costs a timer handle, on uvloop a libuv handle
opened and closed, and ``asyncio.timeout``'s own steps: several microseconds on each request.
Here arming and disarming is a dict insert and pop, and one handle per event loop ticks every
:data:`TICK` seconds while anything is armed, firing what is due (up to a tick late).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["TICK", "Ticks", "ticks"]

TICK = 0.025
"""Seconds between ticks: how late a timer may fire."""


class Ticks:
    """The armed timers of one event loop: ``arm(key, delay, fire)``, ``disarm(key)``."""

    __slots__ = ("_armed", "_handle", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._armed: dict[object, tuple[float, Callable[[], None]]] = {}
        self._handle: asyncio.TimerHandle | None = None

    def arm(self, key: object, delay: float, fire: Callable[[], None]) -> None:
        """Call ``fire()`` (on the loop, between task steps) once ``delay`` seconds have passed,
        unless ``key`` is disarmed first."""
        self._armed[key] = (self.loop.time() + delay, fire)
        if self._handle is None:
            self._handle = self.loop.call_later(TICK, self._tick)

    def disarm(self, key: object) -> None:
        self._armed.pop(key, None)

    def _tick(self) -> None:
        now = self.loop.time()
        armed = self._armed
        due = [key for key, (when, _) in armed.items() if when <= now]
        for key in due:
            entry = armed.pop(key, None)
            if entry is not None:
                entry[1]()
        self._handle = self.loop.call_later(TICK, self._tick) if armed else None


_current: Ticks | None = None


def ticks(loop: asyncio.AbstractEventLoop | None = None) -> Ticks:
    """The running loop's :class:`Ticks` (a new one when the loop changed); ``loop``: the
    running loop, when the caller has it already."""
    global _current
    if loop is None:
        loop = asyncio.get_running_loop()
    current = _current
    if current is None or current.loop is not loop:
        current = _current = Ticks(loop)
    return current
