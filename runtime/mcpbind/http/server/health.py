"""Liveness and readiness endpoints for a balancer or an orchestrator.

``GET /healthz``: 200 while the process serves requests (liveness). ``GET /readyz``: 200 when
it should get new requests, 503 while it drains for shutdown or while what it depends on
(Redis, for a clustered server) does not answer (readiness). Both answer ``text/plain`` and
the worker's process id, so a balancer's log tells workers apart. Every other request goes
to the wrapped application.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from ._asgi import Receive, Scope, Send, send_response

__all__ = ["HEALTH_PATH", "READY_PATH", "WithHealth"]

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"


class WithHealth:
    """``app`` plus ``/healthz`` and ``/readyz``; ``ready()`` says whether dependencies
    answer. :meth:`drain` turns readiness off for good (shutdown has begun)."""

    def __init__(self, app: Any, ready: Callable[[], Awaitable[bool]] | None = None) -> None:
        self.app = app
        self.ready = ready
        self.draining = False

    def drain(self) -> None:
        self.draining = True

    def hand_back(self) -> bool:
        """Shutdown begins: not ready any more, and the app's streams are handed back
        (``StreamableHTTPApp.hand_back``)."""
        self.drain()
        handed: bool = self.app.hand_back()
        return handed

    async def aclose(self) -> None:
        self.drain()
        await self.app.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            path = scope["path"].rstrip("/")
            if path == HEALTH_PATH:
                await self._answer(send, 200, b"alive")
                return
            if path == READY_PATH:
                ok = not self.draining and (self.ready is None or await self.ready())
                await self._answer(send, 200 if ok else 503, b"ready" if ok else b"not ready")
                return
        await self.app(scope, receive, send)

    @staticmethod
    async def _answer(send: Send, status: int, what: bytes) -> None:
        body = b"%s %d\n" % (what, os.getpid())
        await send_response(send, status, body, None, b"text/plain")
