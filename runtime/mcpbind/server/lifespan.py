"""``Server(lifespan=...)``: an async context manager that starts what the handlers share
(connection pools, clients, caches) before the first request and stops it after the last,
once per process whatever serves the server.

Its value (what ``async with`` gives) is ``Context.lifespan_state`` in every handler. It runs
in a task of its own, so it is entered and exited in one task whoever starts it: ``serve``
and ``serve_stdio``, ``serve_http`` (before it listens), an ASGI server's lifespan events, the
first request of an app mounted where no lifespan event reaches it, an in-memory client.
Each of these holds it while it runs; it stops when the last one lets go.

The servers mounted inside a server (``Server.mount``) are held by its run: their lifespans
start before its own and stop after it; one mounted while the run is going is started then,
one unmounted is let go. (A server with neither a lifespan nor a mount when serving starts
has no run: a server mounted into it later has its lifespan started by nothing but its own
serving.)

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

    def __init__(self, server: Server, lifespan: Lifespan | None) -> None:
        self.server = server
        self.lifespan = lifespan
        self.holders = 0
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        #: Set to stop, or to look at the server's mounts again (``_stopping`` tells which).
        self._stop: asyncio.Event | None = None
        self._stopping = False

    def sources_changed(self) -> None:
        """The server's mounts changed: while it runs, hold what was mounted, let go of what
        was unmounted."""
        if self._stop is not None and self._task is not None:
            self._stop.set()

    async def acquire(self) -> None:
        """Hold it: started by the first holder; the others wait until it has. Raises
        :class:`LifespanError` if it fails at start (nothing is then held)."""
        self.holders += 1
        try:
            if self._task is None:
                loop = asyncio.get_running_loop()
                self._ready = loop.create_future()
                self._stop = asyncio.Event()
                self._stopping = False
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
        self._stopping = True
        self._stop.set()
        await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        ready, stop = self._ready, self._stop
        assert ready is not None and stop is not None
        holds: dict[object, contextlib.AsyncExitStack] = {}
        try:
            await self._hold_mounted(holds, starting=True)
            own = self.lifespan(self.server) if self.lifespan is not None else _no_state()
            async with own as state:
                self.server.lifespan_state = state
                ready.set_result(None)
                while True:
                    await stop.wait()
                    if self._stopping:
                        break
                    stop.clear()
                    await self._hold_mounted(holds, starting=False)
        except BaseException as exc:  # a start that raised, or a stop that did
            if not ready.done():
                if isinstance(exc, LifespanError):  # a mounted server's: it names that one
                    ready.set_exception(LifespanError(str(exc)))
                else:
                    reason = " ".join(f"{type(exc).__name__}: {exc}".split())
                    message = (
                        f"the lifespan of server {self.server.name!r} failed to start: {reason}"
                    )
                    ready.set_exception(LifespanError(message))
            elif not isinstance(exc, asyncio.CancelledError):
                logger.error("the lifespan of %s failed to stop", self.server.name, exc_info=exc)
        finally:
            self.server.lifespan_state = None
            for stack in reversed(list(holds.values())):
                await _let_go(stack, self.server.name)

    async def _hold_mounted(
        self, holds: dict[object, contextlib.AsyncExitStack], *, starting: bool
    ) -> None:
        """Hold the lifespans of what is mounted now and let go of what is not. At start a
        failure is the run's; later it is logged and the rest goes on."""
        current = {id(entry): entry for entry in self.server.mounted.values()}
        for key in [key for key in holds if key not in current]:
            await _let_go(holds.pop(key), self.server.name)
        for key, entry in current.items():
            if key in holds:
                continue
            stack = contextlib.AsyncExitStack()
            try:
                await stack.enter_async_context(entry.source.held())
            except LifespanError as exc:
                if starting:
                    raise
                logger.error("%s (mounted under %r)", exc, entry.prefix)
                continue
            holds[key] = stack


@contextlib.asynccontextmanager
async def _no_state() -> AsyncIterator[None]:
    yield None


async def _let_go(stack: contextlib.AsyncExitStack, name: str) -> None:
    try:
        await stack.aclose()
    except Exception as exc:  # a mounted server's stop that failed: logged, the rest goes on
        logger.error("a server mounted in %s failed to stop", name, exc_info=exc)


def _run_of(server: Server) -> LifespanRun | None:
    lifespan = server.lifespan
    if lifespan is None and not server.mounted:
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
