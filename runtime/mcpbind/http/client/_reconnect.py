"""Waiting for a dead HTTP server to come back, with backoff, for a bounded time.

A server that crashes and restarts (a deploy, a supervisor) is back after a moment with none
of its sessions: the client waits for it -- probing with backoff, every waiter sharing one
probe loop -- and its next request gets 404 and re-initializes (basic/transports.mdx §Session
Management). A server still away after ``timeout`` is unreachable: the transport then closes
and every caller gets ``ConnectionClosed``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from ...protocol import CONNECTION_CLOSED
from ...transports.backoff import MIN_RECONNECT_DELAY, reconnect_delay
from ...transports.lost import CONNECTION_LOST
from ._peek import RequestId, error_response

__all__ = ["ServerWatch", "connection_lost"]


def connection_lost(request_ids: tuple[RequestId, ...] | set[RequestId], why: str) -> list[bytes]:
    """Error responses for requests lost with the connection to the server."""
    data = {CONNECTION_LOST: True}
    return [error_response(rid, CONNECTION_CLOSED, why, data) for rid in request_ids]


class ServerWatch:
    """``await watch.wait_back()``: True once ``probe()`` says the server answers, False once
    ``timeout`` seconds passed without that. Probes start ``first_delay`` apart and double up
    to ``max_delay``, with jitter (:func:`~mcpbind.transports.backoff.reconnect_delay`);
    concurrent waiters share one loop (a probe that succeeded after a
    waiter started answers it at once)."""

    def __init__(
        self,
        probe: Callable[[], Awaitable[bool]],
        *,
        timeout: float,
        first_delay: float = MIN_RECONNECT_DELAY,
        max_delay: float = 5.0,
    ) -> None:
        self._probe = probe
        self.timeout = timeout
        self.first_delay = first_delay
        self.max_delay = max_delay
        self._lock = anyio.Lock()
        self._answered_at = float("-inf")

    async def wait_back(self) -> bool:
        started = anyio.current_time()
        async with self._lock:
            if self._answered_at >= started:
                return True
            deadline = anyio.current_time() + self.timeout
            attempt = 0
            while True:
                if await self._probe():
                    self._answered_at = anyio.current_time()
                    return True
                remaining = deadline - anyio.current_time()
                if remaining <= 0:
                    return False
                delay = reconnect_delay(
                    self.first_delay, attempt, floor=self.first_delay, cap=self.max_delay
                )
                await anyio.sleep(min(delay, remaining))
                attempt += 1
