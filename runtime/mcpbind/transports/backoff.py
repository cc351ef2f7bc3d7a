"""How long a client waits before it opens a stream again: a floor, doubling, a cap, jitter.

Every reconnecting loop of the client (the Streamable HTTP GET stream, the resumption of a
request's stream, the wait for a server that went away, the 2026-07-28 ``subscriptions/listen``
stream) waits :func:`reconnect_delay`. ``base`` is what the server asked for (its SSE
``retry``) or the configured delay; it is raised to ``floor``, so ``retry: 0`` cannot make a
client reconnect thousands of times a minute; it doubles for each attempt in a row that
brought nothing (an empty stream, a refusal), up to ``cap``; and up to a quarter more is
added at random (never less: a server's ``retry`` is a minimum), so clients a server dropped
together do not all come back at the same instant.
"""

from __future__ import annotations

import random

__all__ = ["MAX_RECONNECT_DELAY", "MIN_RECONNECT_DELAY", "reconnect_delay"]

#: Seconds: the shortest wait before reconnecting, whatever the server's ``retry`` says.
MIN_RECONNECT_DELAY = 0.1
#: Seconds: the longest wait between two attempts, before the jitter (up to a quarter more).
MAX_RECONNECT_DELAY = 30.0


def reconnect_delay(
    base: float,
    streak: int,
    *,
    floor: float = MIN_RECONNECT_DELAY,
    cap: float = MAX_RECONNECT_DELAY,
) -> float:
    """Seconds to wait before attempt ``streak + 1`` of a run of fruitless attempts."""
    delay = max(floor, min(cap, max(base, floor) * 2.0 ** min(max(streak, 0), 64)))
    return delay * random.uniform(1.0, 1.25)
