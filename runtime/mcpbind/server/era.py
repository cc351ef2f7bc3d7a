"""Both eras on one connection: route each inbound message before the session core sees it.

basic/versioning.mdx (dual-era server): a request carrying modern per-request ``_meta`` (or
``server/discover``) is served statelessly; ``initialize`` selects the handshake era for the
rest of the connection. ``EraRouter`` wraps the transport the ``Connection`` reads: stateless
requests are answered here through :func:`mcpbind.stateless.answer`; everything else passes
through unchanged, and after ``initialize`` the router steps aside entirely.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from ..protocol import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
    SessionOptions,
)
from ..protocol._wire import encode_error
from ..protocol.classify import classify
from ..protocol.depth import DEFAULT_MAX_DEPTH
from ..stateless.options import options_of
from ..transports import Transport, TransportClosed
from ..versions import HANDSHAKE_VERSIONS
from .limits import server_inflight

if TYPE_CHECKING:
    from ..stateless.listen import ListenHub
    from .app import Server

__all__ = ["EraRouter"]

logger = logging.getLogger("mcpbind.server")

_CLOSED = (TransportClosed, anyio.BrokenResourceError, anyio.ClosedResourceError)


class EraRouter:
    """A ``Transport`` in front of the real one that serves stateless requests itself."""

    def __init__(
        self,
        inner: Transport,
        server: Server,
        spawn: Callable[[Callable[[], Coroutine[Any, Any, None]]], None],
        on_handshake: Callable[[], None],
    ) -> None:
        self.inner = inner
        self.server = server
        self._spawn = spawn
        self._on_handshake = on_handshake
        #: Stateless requests being answered: an asyncio task (on asyncio, cheaper) or the
        #: cancel scope of an anyio task; and those the client cancelled.
        self._inflight: dict[int | str, asyncio.Task[None] | anyio.CancelScope] = {}
        self._cancelled: set[int | str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_known = False
        opts = options_of(server)
        self._handshake_versions = [v for v in opts.versions if v in HANDSHAKE_VERSIONS]
        #: Stateless requests answered on this connection (for tests and metrics).
        self.served = 0
        #: Deeper messages are left to the session core, which refuses them.
        self.max_depth = DEFAULT_MAX_DEPTH
        #: Stateless requests answered at once; more get "Server busy".
        self.max_inflight = SessionOptions().max_inflight
        self._shared = server_inflight(server)
        #: This connection's ``subscriptions/listen`` streams (created on first use).
        self.hub: ListenHub | None = None

    async def send(self, data: bytes) -> None:
        await self.inner.send(data)

    async def aclose(self) -> None:
        await self.stop()
        await self.inner.aclose()

    async def stop(self) -> None:
        """Cancel the stateless requests still running and wait for them (connection end)."""
        running = list(self._inflight.values())
        for handle in running:
            handle.cancel()
        tasks = [h for h in running if isinstance(h, asyncio.Task)]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def receive(self) -> bytes:
        while True:
            data = await self.inner.receive()
            if not await self._route(data):
                return data

    async def _route(self, data: bytes) -> bool:
        """Handle ``data`` here (True) or leave it to the session core (False)."""
        incoming = classify(data, self.max_depth)
        if incoming.kind == "cancelled":
            cancelled = incoming.cancelled_id
            handle = self._inflight.get(cancelled) if cancelled is not None else None
            if handle is None or cancelled is None:
                return False  # a handshake-era request's: the core handles it
            self._cancelled.add(cancelled)
            handle.cancel()  # stdio.mdx, Cancellation: nothing more is sent for it
            return True
        rid, method = incoming.id, incoming.method
        if rid is None or method is None:
            return False
        if incoming.kind == "initialize":
            if not self._handshake_versions:
                # versioning.mdx: a modern-only server names its versions to legacy clients.
                supported = list(options_of(self.server).versions)
                error = McpError(
                    UNSUPPORTED_PROTOCOL_VERSION,
                    f"This server speaks only protocol {', '.join(supported)} (no initialize)",
                    {"supported": supported, "requested": incoming.requested_version or ""},
                )
                await self._send(encode_error(rid, error))
                return True
            self._on_handshake()
            return False
        if incoming.kind != "stateless":
            return False
        if rid in self._inflight:
            error = McpError(
                INVALID_REQUEST, f"Invalid Request: request id {rid!r} is already in flight"
            )
            await self._send(encode_error(rid, error))
            return True
        shared = self._shared
        if len(self._inflight) >= self.max_inflight or shared.count >= shared.limit:
            limit, where = self.max_inflight, "session"
            if len(self._inflight) < limit:
                limit, where = shared.limit, "server"
            message = f"Server busy: {limit} requests in flight on this {where}; retry later"
            await self._send(encode_error(rid, McpError(INTERNAL_ERROR, message)))
            return True
        shared.count += 1
        raw = incoming.params
        if not self._loop_known:
            self._loop_known = True
            try:
                self._loop = asyncio.get_running_loop()
            except RuntimeError:
                self._loop = None
        if self._loop is not None:
            task = self._loop.create_task(self._serve_task(rid, method, raw))
            self._inflight[rid] = task
            # A done callback, not a ``finally``: a task cancelled before its first step
            # never runs its body, and its slot must still be freed.
            task.add_done_callback(functools.partial(self._task_done, rid))
        else:
            scope = anyio.CancelScope()
            self._inflight[rid] = scope
            self._spawn(lambda: self._serve_scoped(rid, method, raw, scope))
        return True

    async def _serve_task(self, rid: int | str, method: str, raw: msgspec.Raw | None) -> None:
        # Cancelled by the client, or the connection ended: nothing more to send.
        with contextlib.suppress(asyncio.CancelledError):
            await self._serve(rid, method, raw)

    def _task_done(self, rid: int | str, task: asyncio.Task[None]) -> None:
        if self._inflight.get(rid) is task:
            self._done(rid)

    async def _serve_scoped(
        self, rid: int | str, method: str, raw: msgspec.Raw | None, scope: anyio.CancelScope
    ) -> None:
        try:
            with scope:
                await self._serve(rid, method, raw)
        finally:
            self._done(rid)

    def _done(self, rid: int | str) -> None:
        if self._inflight.pop(rid, None) is not None:
            self._shared.count -= 1
        self._cancelled.discard(rid)

    async def _serve(self, rid: int | str, method: str, raw: msgspec.Raw | None) -> None:
        from ..stateless.dispatch import answer  # here: dispatch imports the server package
        from ..stateless.listen import LISTEN

        if method == LISTEN:
            await self._listen(rid, raw)
            return

        async def emit(message: bytes) -> None:
            if rid not in self._cancelled:
                await self._send(message)

        reply = await answer(self.server, rid, method, raw, emit=emit)
        self.served += 1
        if rid not in self._cancelled:
            await self._send(reply.data)

    async def _listen(self, rid: int | str, raw: msgspec.Raw | None) -> None:
        """``subscriptions/listen`` on this connection (subscriptions.mdx): the
        acknowledgement, then tagged notifications until ``notifications/cancelled`` names it
        (its task is cancelled) or the connection ends; ``close_listeners()`` ends it with
        the final result (Graceful Closure)."""
        from ..stateless.dispatch import Reply
        from ..stateless.listen import ListenHub

        if self.hub is None:
            self.hub = ListenHub(self.server)
        opened = self.hub.open(rid, raw)
        self.served += 1
        if isinstance(opened, Reply):
            await self._send(opened.data)
            return
        try:
            await self._send(opened.acknowledgement())
            while (message := await opened.next()) is not None:
                if rid in self._cancelled:
                    return
                await self._send(message)
            await self._send(opened.final_result())
        finally:
            self.hub.close(opened)

    def close_listeners(self) -> None:
        """End this connection's listen subscriptions gracefully (their final result)."""
        if self.hub is not None:
            self.hub.close_all()

    async def _send(self, data: bytes) -> None:
        with contextlib.suppress(*_CLOSED):
            await self.inner.send(data)
