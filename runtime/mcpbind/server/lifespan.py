"""``Server(lifespan=...)``: an async context manager that starts what the handlers share
(connection pools, clients, caches) before the first request and stops it after the last,
once per process whatever serves the server.

Its value (what ``async with`` gives) is ``Context.lifespan_state`` in every handler. It runs
in a task of its own, so it is entered and exited in one task whoever starts it: ``serve``
and ``serve_stdio``, ``serve_http`` (before it listens), an ASGI server's lifespan events, the
first request of an app mounted where no lifespan event reaches it, an in-memory client.
Each of these holds it while it runs; it stops when the last one lets go.

A failure at start is a :class:`LifespanError` with one line saying what failed; ``serve_stdio``
and ``serve_http`` print it and exit with status 3 (docs/snippets/exit-codes.md: could not
start the server).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import Server

__all__ = ["Lifespan", "LifespanClaim", "LifespanError", "LifespanRun", "held"]

logger = logging.getLogger("mcpbind.server")

Lifespan = Callable[["Server"], AbstractAsyncContextManager[Any]]
"""``lifespan(server)``: an async context manager; its value is the handlers' state."""

STARTUP_FAILURE = 3
"""The exit status of a server whose lifespan failed at start (docs/snippets/exit-codes.md)."""


class LifespanError(Exception):
    """The server's lifespan failed at start; the message is one line naming the cause."""


class LifespanRun:
    """One server's lifespan, run in a task of its own while anything holds it."""

    def __init__(self, server: Server, lifespan: Lifespan) -> None:
        self.server = server
        self.lifespan = lifespan
        self.holders = 0
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._stop: asyncio.Event | None = None

    async def acquire(self) -> None:
        """Hold it: started by the first holder; the others wait until it has. Raises
        :class:`LifespanError` if it fails at start (nothing is then held)."""
        self.holders += 1
        try:
            if self._task is None:
                loop = asyncio.get_running_loop()
                self._ready = loop.create_future()
                self._stop = asyncio.Event()
                # A context of its own: not the request's that may start it (its principal,
                # headers and trace are not the lifespan's, nor are they its tasks').
                self._task = loop.create_task(self._run(), context=contextvars.Context())
            assert self._ready is not None
            await asyncio.shield(self._ready)
        except BaseException:
            self.holders -= 1
            if self.holders == 0 and self._task is not None and self._task.done():
                self._task = None  # failed: the next holder tries again
            raise

    async def release(self) -> None:
        """Let go; the last holder stops it (and waits for it to finish)."""
        self.holders -= 1
        task = self._task
        if self.holders > 0 or task is None:
            return
        self._task = None
        assert self._stop is not None
        self._stop.set()
        await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        ready, stop = self._ready, self._stop
        assert ready is not None and stop is not None
        try:
            async with self.lifespan(self.server) as state:
                self.server.lifespan_state = state
                ready.set_result(None)
                await stop.wait()
        except BaseException as exc:  # a start that raised, or a stop that did
            if not ready.done():
                reason = " ".join(f"{type(exc).__name__}: {exc}".split())
                message = f"the lifespan of server {self.server.name!r} failed to start: {reason}"
                ready.set_exception(LifespanError(message))
            elif not isinstance(exc, asyncio.CancelledError):
                logger.error("the lifespan of %s failed to stop", self.server.name, exc_info=exc)
        finally:
            self.server.lifespan_state = None


def _run_of(server: Server) -> LifespanRun | None:
    lifespan = server.lifespan
    if lifespan is None:
        return None
    run = server.lifespan_run
    if run is None or run.lifespan is not lifespan:
        run = server.lifespan_run = LifespanRun(server, lifespan)
    return run


@contextlib.asynccontextmanager
async def held(server: Server) -> AsyncIterator[None]:
    """Hold the server's lifespan while the block runs (nothing without one)."""
    run = _run_of(server)
    if run is None:
        yield
        return
    await run.acquire()
    try:
        yield
    finally:
        await run.release()


class LifespanClaim:
    """An ASGI app's hold on its server's lifespan: taken at the ASGI lifespan's startup or,
    mounted where none reaches it, by the first request; let go by the app's ``aclose``."""

    __slots__ = ("_run", "_taking", "server", "taken")

    def __init__(self, server: Server) -> None:
        self.server = server
        self.taken = False
        self._taking: asyncio.Future[None] | None = None
        self._run: LifespanRun | None = None

    async def take(self) -> None:
        """Hold it (once); concurrent callers wait for the same start. Raises
        :class:`LifespanError` (and a later call tries again)."""
        if self.taken:
            return
        if self._taking is None:
            run = self._run = _run_of(self.server)
            if run is None:
                return
            self._taking = asyncio.ensure_future(run.acquire())
        taking = self._taking
        try:
            await asyncio.shield(taking)
        except LifespanError:
            if self._taking is taking:
                self._taking = None
            raise
        self.taken = True

    async def drop(self) -> None:
        """Let go of it, if held."""
        taking, self._taking = self._taking, None
        if taking is None:
            return
        if not taking.done():
            await asyncio.gather(taking, return_exceptions=True)
        if self.taken and self._run is not None:
            self.taken = False
            await self._run.release()
