"""Where synchronous (``def``) tools run: a bounded pool of daemon threads per event loop.

Python cannot stop a thread, so cancelling a ``def`` tool works like this:

- the request is answered at once as cancelled (nothing is sent for it), and the tool's
  :attr:`Context.cancelled` flag turns true for good, so a tool that takes a ``Context`` can
  check it between steps and return early;
- the thread keeps its slot in the pool until the function really returns, so abandoned
  calls can never make more than ``max_threads`` threads (a call waits for a free slot);
- the threads are daemon threads: when the server ends (stdin EOF on stdio), it waits at most
  ``grace`` seconds for running tools (:func:`drain`), then exits without them.

Handing a call to a thread costs one ``SimpleQueue.put`` and one ``call_soon_threadsafe``
(anyio's ``to_thread`` adds a capacity limiter, a cancel scope and a locked ``Queue``).
"""

from __future__ import annotations

import contextvars
import threading
import weakref
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .._lazy import LazyModule

if TYPE_CHECKING:
    import asyncio
    import queue
else:  # imported when a loop first uses it, not with mcpbind (issue 15, cold start)
    asyncio = LazyModule("asyncio", globals())
    queue = LazyModule("queue", globals())


__all__ = [
    "DEFAULT_MAX_THREADS",
    "ToolThreads",
    "drain",
    "on_asyncio",
    "run_in_thread",
    "tool_threads",
]

T = TypeVar("T")

DEFAULT_MAX_THREADS = 40
"""Threads running ``def`` tools at once, per event loop (anyio's default limit too)."""

_IDLE_SECONDS = 10.0
_Item = tuple[Callable[[], Any], "asyncio.Future[Any]", contextvars.Context] | None


class ToolThreads:
    """The pool of one event loop. ``busy`` counts threads running a call, abandoned or not."""

    def __init__(self, loop: asyncio.AbstractEventLoop, max_threads: int) -> None:
        self.loop = loop
        self.max_threads = max_threads
        self.busy = 0
        self._idle: list[queue.SimpleQueue[_Item]] = []
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._drained: asyncio.Event | None = None

    async def run(self, fn: Callable[[], T], on_cancel: Callable[[], None] | None = None) -> T:
        """``fn()`` in a pool thread; if the awaiting task is cancelled, ``on_cancel()`` runs
        and the call is abandoned (its slot stays taken until ``fn`` returns)."""
        while self.busy >= self.max_threads:
            wake = self.loop.create_future()
            self._waiting.append(wake)
            try:
                await wake
            except asyncio.CancelledError:
                if wake.done() and not wake.cancelled():
                    self._wake_next()  # the slot it was given goes to the next in line
                raise
        self.busy += 1
        done: asyncio.Future[T] = self.loop.create_future()
        inbox = self._idle.pop() if self._idle else self._start_thread()
        inbox.put((fn, done, contextvars.copy_context()))
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:
            if on_cancel is not None:
                on_cancel()
            raise

    def _start_thread(self) -> queue.SimpleQueue[_Item]:
        inbox: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        thread = threading.Thread(
            target=_work, args=(inbox, self), name="mcpbind tool thread", daemon=True
        )
        thread.start()
        return inbox

    def _finished(
        self,
        inbox: queue.SimpleQueue[_Item],
        done: asyncio.Future[Any],
        result: Any,
        error: BaseException | None,
    ) -> None:
        """On the loop: the thread returned; deliver, free the slot, park the thread."""
        self.busy -= 1
        self._idle.append(inbox)
        if not done.done():
            if error is not None:
                done.set_exception(error)
            else:
                done.set_result(result)
        elif error is not None:
            done.exception()  # abandoned: nobody will look at it
        self._wake_next()
        if self.busy == 0 and self._drained is not None:
            self._drained.set()

    def _retire(self, inbox: queue.SimpleQueue[_Item]) -> None:
        if inbox in self._idle:
            self._idle.remove(inbox)
            inbox.put(None)

    def _wake_next(self) -> None:
        while self._waiting:
            wake = self._waiting.popleft()
            if not wake.done():
                wake.set_result(None)
                return

    async def drain(self, grace: float) -> int:
        """Wait up to ``grace`` seconds for running calls; how many are still running."""
        if self.busy and grace > 0:
            self._drained = asyncio.Event()
            try:
                await asyncio.wait_for(self._drained.wait(), grace)
            except TimeoutError:
                pass
            finally:
                self._drained = None
        return self.busy


def _work(inbox: queue.SimpleQueue[_Item], pool: ToolThreads) -> None:
    loop = pool.loop
    while True:
        try:
            item = inbox.get(timeout=_IDLE_SECONDS)
        except queue.Empty:
            # Idle: ask the loop to retire this thread (it answers None, or a call that was
            # handed over meanwhile); a closed loop means the server is gone.
            try:
                loop.call_soon_threadsafe(pool._retire, inbox)
            except RuntimeError:
                return
            item = inbox.get()
        if item is None:
            return
        fn, done, context = item
        result: Any = None
        error: BaseException | None = None
        try:
            result = context.run(fn)
        except BaseException as exc:  # SystemExit too: it is the tool's, not this thread's
            error = exc
        try:
            loop.call_soon_threadsafe(pool._finished, inbox, done, result, error)
        except RuntimeError:  # the loop is closed: the server is gone, and so is this thread
            return
        del fn, done, context, result, error, item


_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ToolThreads] = (
    weakref.WeakKeyDictionary()
)


def tool_threads(max_threads: int = DEFAULT_MAX_THREADS) -> ToolThreads:
    """The running loop's pool (created on first use)."""
    loop = asyncio.get_running_loop()
    pool = _POOLS.get(loop)
    if pool is None:
        pool = _POOLS[loop] = ToolThreads(loop, max_threads)
    return pool


async def run_in_thread(fn: Callable[[], T], on_cancel: Callable[[], None] | None = None) -> T:
    """:meth:`ToolThreads.run` on the running loop's pool."""
    return await tool_threads().run(fn, on_cancel)


def on_asyncio() -> bool:
    """Whether an asyncio loop runs this thread (the pool is asyncio's; trio keeps anyio's)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def drain(grace: float) -> int:
    """:meth:`ToolThreads.drain` of the running loop's pool (0 if it has none)."""
    pool = _POOLS.get(asyncio.get_running_loop())
    return 0 if pool is None else await pool.drain(grace)
