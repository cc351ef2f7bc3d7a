"""Where synchronous (``def``) tools run: a bounded pool of daemon threads per event loop.

The hand-off is built so that a quick ``def`` tool costs little more than an ``async def``
one (issue 15), while one that blocks never holds up other requests:

- one shared work queue per loop, drained by as few threads as needed: the first call starts
  one thread, and while it keeps up, calls that arrive together (32 in flight, many HTTP
  clients) are run one after another by that one thread, with no other thread woken to
  contend for the GIL;
- an idle thread sleeps on a pipe, and the loop wakes it by writing a byte (only while a
  thread sleeps: a busy one takes queued calls before it sleeps, so it needs none): ``os.write``
  lets go of the GIL before the system call that wakes the thread, so the thread finds the
  GIL free (a queue's lock is released with the GIL held: the woken thread blocks on the GIL
  at once and has to be woken a second time). A hand-off and back took 3-5 us instead of
  13-19 us (a thread ping-pong on this 2-CPU VM, pinned to one CPU or not);
- results go back in batches: a thread queues each result and asks the loop to deliver only
  when no delivery is pending, so one ``call_soon_threadsafe`` (one loop wake-up) serves every
  call that finished meanwhile;
- a call that finds nothing outstanding (sequential calls) is the first of its loop
  iteration: the loop waits up to ``WAIT`` (1 ms) for its result instead of going back to
  its selector. A quick tool holds the GIL while it runs, so the loop could not have run
  anyway; the result comes back with no wake-up of the loop, no future callback and no extra
  loop iteration. A call that takes longer is left to come back the usual way, and the next
  calls skip the wait (a back-off that doubles up to 1024 calls), so a blocking tool costs
  the loop at most 1 ms now and then;
- a watchdog on the loop (a timer armed while calls are outstanding) starts another thread,
  up to ``max_threads``, when queued calls have waited a whole ``PATIENCE`` (10 ms, twice
  the GIL switch interval) with no thread taking one (every thread is stuck in a slow or
  blocking call): a tool that blocks for a second delays other calls by 20 ms at most.

Python cannot stop a thread, so cancelling a ``def`` tool works like this:

- the request is answered at once as cancelled (nothing is sent for it), and the tool's
  :attr:`Context.cancelled` flag turns true for good, so a tool that takes a ``Context`` can
  check it between steps and return early; a call still queued is dropped unrun;
- a thread running an abandoned call stays taken until the function really returns, and
  threads never number more than ``max_threads``, so call-then-cancel floods cannot grow the
  thread count past the bound (later calls wait in the queue);
- the threads are daemon threads: when the server ends (stdin EOF on stdio), it waits at most
  ``grace`` seconds for outstanding calls (:func:`drain`), then exits without them; a thread
  idle for ``_IDLE_SECONDS`` ends.

Contextvars reach the tool: each call runs in a copy of the caller's context.
"""

from __future__ import annotations

import contextvars
import os
import select
import threading
import weakref
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any, TypeVar

from .._asyncio import Raised, carried
from .._lazy import LazyModule

if TYPE_CHECKING:
    import asyncio
else:  # imported when a loop first uses it, not with mcpbind (issue 15, cold start)
    asyncio = LazyModule("asyncio", globals())


__all__ = [
    "DEFAULT_MAX_THREADS",
    "PATIENCE",
    "ToolThreads",
    "drain",
    "on_asyncio",
    "run_in_thread",
    "tool_threads",
]

T = TypeVar("T")

DEFAULT_MAX_THREADS = 40
"""Threads running ``def`` tools at once, per event loop (anyio's default limit too)."""

WAIT = 0.001
"""Seconds the loop waits for a call's result when nothing else is outstanding."""

PATIENCE = 0.01
"""Seconds queued calls may wait with no thread taking one before another thread starts."""

_IDLE_SECONDS = 10.0
_MAX_SKIP = 1024
#: A queued call: the function, a box holding its future (made only once the loop does not
#: wait for the call), the context to run it in, and the claim of a call the loop waits for.
_Call = tuple[
    Callable[[], Any], list["asyncio.Future[Any] | None"], contextvars.Context, list[None] | None
]
_Done = tuple["asyncio.Future[Any]", Any, BaseException | None]


class ToolThreads:
    """The pool of one event loop (its state is the loop's, except where a method says)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, max_threads: int) -> None:
        self.loop = loop
        self.max_threads = max_threads
        self.threads = 0  # started and not told to stop
        self.pending = 0  # calls handed over and not yet delivered (queued, running, done)
        self.taken = 0  # written by the threads: calls taken off the queue (progress)
        self._taken_seen = 0
        self._work: deque[_Call | None] = deque()  # appended by the loop, taken by threads
        #: Idle threads wait for the read end to be readable; a byte written wakes them.
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        # Closed with the pool, which its threads hold while they run (not at exit: a daemon
        # thread may still poll it then).
        weakref.finalize(self, _close_pipe, self._wake_r, self._wake_w).atexit = False
        self._done: deque[_Done] = deque()  # appended by the threads
        #: Threads asleep on the pipe (their idents; set.add/discard are atomic): a call is
        #: announced only while one sleeps, so busy threads cost no write and no wake-up.
        self._sleeping: set[int] = set()
        self._delivery_due = False  # set by a thread that asked the loop to deliver
        self._watchdog: asyncio.TimerHandle | None = None
        self._drained: asyncio.Event | None = None
        self._met = threading.Lock()  # held, except when a thread hands back a waited-for call
        self._met.acquire()
        self._hand_back: tuple[Any, BaseException | None] = (None, None)
        self._skip_waits = 0  # calls that go the queue's way without a wait (back-off)
        self._skip_next = 1
        self._waited = False  # the loop waited for a call in this iteration of the loop
        # What clears it at the next iteration: one handle, reused, put straight on asyncio's
        # ready queue (private ``BaseEventLoop._ready``, a deque of handles; tested in
        # tests/test_private_apis.py) instead of a call_soon per waited call (four Python
        # frames and a new handle); other loops (uvloop) get call_soon.
        ready = getattr(loop, "_ready", None)
        self._ready: deque[Any] | None = ready if type(ready) is deque else None
        self._next = asyncio.Handle(self._next_iteration, (), loop)

    @property
    def busy(self) -> int:
        """Threads taken by a call, abandoned or not (at most ``threads``)."""
        return min(self.pending, self.threads)

    async def run(self, fn: Callable[[], T], on_cancel: Callable[[], None] | None = None) -> T:
        """``fn()`` in a pool thread; if the awaiting task is cancelled, ``on_cancel()`` runs
        and the call is abandoned (dropped if no thread took it yet)."""
        done: asyncio.Future[T] | None
        if (
            self.threads
            and not self.pending
            and not self._skip_waits
            and self._first_this_iteration()
        ):
            done = self._hand_over_and_wait(fn)
            if done is None:
                return self._handed_back()  # type: ignore[no-any-return]
        else:
            if self._skip_waits:
                self._skip_waits -= 1
            done = self.loop.create_future()
            self._put((fn, [done], contextvars.copy_context(), None))
            self.pending += 1
            if not self.threads:
                self._start_thread()
        if self._watchdog is None:
            self._taken_seen = self.taken
            self._watchdog = self.loop.call_later(PATIENCE, self._watch)
        try:
            result = await done  # cancelling the task cancels ``done``: a thread then drops it
        except asyncio.CancelledError:
            if on_cancel is not None:
                on_cancel()
            raise
        return Raised.reraise(result)  # type: ignore[no-any-return]

    def _first_this_iteration(self) -> bool:
        """Whether this is the loop's first wait in this iteration of the loop. Calls that
        arrive together (read in one go, 32 in flight) are handled in one iteration: the first
        may wait, the others go through the queue at once and come back in one batch."""
        if self._waited:
            return False
        self._waited = True
        if self._ready is not None:
            self._ready.append(self._next)
        else:
            self.loop.call_soon(self._next_iteration)
        return True

    def _next_iteration(self) -> None:
        self._waited = False

    def _hand_over_and_wait(self, fn: Callable[[], Any]) -> asyncio.Future[Any] | None:
        """Nothing is outstanding, so an idle thread takes this call at once: block the loop
        up to ``WAIT`` for its outcome (``None``: it was handed back). If it takes longer, its
        future is made (before the claim is given up: the thread reads it after) and returned
        to wait on, and the next calls skip the wait for a while (doubling back-off)."""
        claim: list[None] = [None]  # popped first by the thread (finished) or the loop (gave up)
        box: list[asyncio.Future[Any] | None] = [None]
        self._put((fn, box, contextvars.copy_context(), claim))
        self.pending += 1
        try:
            if self._met.acquire(True, WAIT):
                return None
            done = box[0] = self.loop.create_future()
            if self._stop_waiting(claim):
                return None
        except BaseException:  # interrupted (KeyboardInterrupt): leave the pool consistent
            future = box[0]
            if future is None:
                future = box[0] = self.loop.create_future()
            if self._stop_waiting(claim):
                self.pending -= 1
                self._hand_back = (None, None)
            else:
                future.cancel()  # it comes back through its future, which nobody awaits now
            raise
        self._skip_waits = self._skip_next
        self._skip_next = min(2 * self._skip_next, _MAX_SKIP)
        return done

    def _stop_waiting(self, claim: list[None]) -> bool:
        """Give up waiting: False if the call will come back through its future; True if the
        thread finished it meanwhile (its hand-back is then imminent, and taken here)."""
        try:
            claim.pop()
        except IndexError:
            self._met.acquire()
            return True
        return False

    def _handed_back(self) -> Any:
        """The outcome of a call the loop waited for (the thread released ``_met``)."""
        self.pending -= 1
        self._skip_next = 1
        result, error = self._hand_back
        self._hand_back = (None, None)
        if error is not None:
            raise error
        return result

    def _put(self, call: _Call | None) -> None:
        """Queue a call (``None``: one thread ends) and wake an idle thread, if one sleeps."""
        self._work.append(call)
        if not self._sleeping:  # every thread is awake: each takes calls until none is left
            return
        try:  # noqa: SIM105 - a hot path: no context manager object per call
            os.write(self._wake_w, b"\0")
        except BlockingIOError:  # the pipe is full of wake-ups: the threads are awake anyway
            pass

    def _start_thread(self) -> None:
        self.threads += 1
        threading.Thread(target=self._serve, name="mcpbind tool thread", daemon=True).start()

    def _watch(self) -> None:
        """Every ``PATIENCE`` while calls are outstanding: a call waited all that time and no
        thread took one, so every thread is busy with a slow call: start another one."""
        self._watchdog = None
        if not self.pending:
            return
        taken = self.taken
        if (
            taken == self._taken_seen
            and self._work
            and self.threads < self.max_threads
            and self._running() >= self.threads
        ):
            self._start_thread()
        self._taken_seen = taken
        self._watchdog = self.loop.call_later(PATIENCE, self._watch)

    def _running(self) -> int:
        """Calls a thread has taken and not finished (abandoned ones too). While it is below
        ``threads``, a thread is idle: it has yet to take a queued call (it waits for the
        GIL), and another thread would not take it sooner."""
        work = self._work
        queued = len(work) - work.count(None)  # ``None``: a thread is asked to end
        return self.pending - queued - len(self._done)

    def _deliver(self) -> None:
        """On the loop: hand every finished call's outcome to its awaiting task."""
        self._delivery_due = False  # before draining: a result queued after this asks again
        finished = self._done
        while finished:
            done, result, error = finished.popleft()
            self.pending -= 1
            if done.done():
                continue  # abandoned (cancelled): nobody waits for it
            if error is None:
                done.set_result(result)
            elif carried(error):
                done.set_result(Raised(error))  # not for a future to carry (issue 28 F18)
            else:
                done.set_exception(error)
        if not self.pending and self._drained is not None:
            self._drained.set()

    def _idle(self) -> None:
        """On the loop: a thread found no work for ``_IDLE_SECONDS``; one thread ends."""
        if self.threads:
            self.threads -= 1
            self._put(None)

    async def drain(self, grace: float) -> int:
        """Wait up to ``grace`` seconds for outstanding calls; how many threads still run one."""
        if self.pending and grace > 0:
            self._drained = asyncio.Event()
            try:
                await asyncio.wait_for(self._drained.wait(), grace)
            except TimeoutError:
                pass
            finally:
                self._drained = None
        return self.busy

    def _serve(self) -> None:
        """A self thread: run queued calls in order; queue each outcome for the loop."""
        loop, work, finished, wake = self.loop, self._work, self._done, self._wake_r
        sleeping, me = self._sleeping, threading.get_ident()
        idle = select.poll()  # not select.select: the fd may be above FD_SETSIZE
        idle.register(wake, select.POLLIN)
        woken = False  # wake-up bytes may be waiting in the pipe
        while True:
            try:
                call = work.popleft()
            except IndexError:
                # Nothing queued. A byte is a hint, not a call (calls queued meanwhile are taken
                # all the same), so the bytes are read after the calls they announced ran: the
                # call that woke this thread starts one system call sooner.
                if woken:
                    woken = False
                    with suppress(BlockingIOError):  # another thread took them
                        os.read(wake, 4096)
                    continue
                # Asleep first, then one more look: a call queued before the loop saw this thread
                # asleep (so it wrote no byte) is found here, not after the idle timeout.
                sleeping.add(me)
                if work:
                    sleeping.discard(me)
                    continue
                woken = bool(idle.poll(_IDLE_SECONDS * 1000))
                sleeping.discard(me)
                if woken:
                    continue
                try:  # a closed loop means the server is gone, and so is this thread
                    loop.call_soon_threadsafe(self._idle)
                except RuntimeError:
                    return
                continue
            if call is None:
                return
            self.taken += 1  # only read as "changed since": a lost update between threads is fine
            fn, box, context, claim = call
            result: Any = None
            error: BaseException | None = None
            done = box[0]  # None while the loop waits for the call
            if done is None or not done.cancelled():  # one cancelled while queued is dropped unrun
                try:
                    result = context.run(fn)
                except BaseException as exc:  # SystemExit too: it is the tool's, not this thread's
                    error = exc
            if claim is not None:
                try:
                    claim.pop()
                except IndexError:
                    pass  # the loop stopped waiting: deliver the usual way
                else:  # the loop still waits for this call (blocked on _met): hand it straight back
                    self._hand_back = (result, error)
                    self._met.release()
                    del fn, box, done, context, result, error, call
                    continue
                done = box[0]  # made by the loop before it gave the claim up
            assert done is not None
            finished.append((done, result, error))
            if not self._delivery_due:
                self._delivery_due = True
                try:
                    loop.call_soon_threadsafe(self._deliver)
                except RuntimeError:
                    return
            del fn, box, done, context, result, error, call


def _close_pipe(*fds: int) -> None:
    for fd in fds:
        os.close(fd)


#: Each loop's pool, by ``id(loop)`` (checked against ``pool.loop``: an id is reused once its
#: loop is gone). Held weakly: a pool lives while its threads, a call or :data:`_last` hold
#: it, so a closed loop's pool (its loop, its pipe) goes once its idle threads end. (Keyed
#: weakly by the loop instead, the pool's own reference to its loop would keep both forever.)
_POOLS: weakref.WeakValueDictionary[int, ToolThreads] = weakref.WeakValueDictionary()


_last: ToolThreads | None = None  # the pool used last (a server has one loop)


def tool_threads(max_threads: int = DEFAULT_MAX_THREADS) -> ToolThreads:
    """The running loop's pool (created on first use); ``RuntimeError`` off asyncio."""
    global _last
    loop = asyncio.get_running_loop()
    pool = _last
    if pool is None or pool.loop is not loop:
        pool = _POOLS.get(id(loop))
        if pool is None or pool.loop is not loop:
            pool = _POOLS[id(loop)] = ToolThreads(loop, max_threads)
        _last = pool
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
    loop = asyncio.get_running_loop()
    pool = _POOLS.get(id(loop))
    return 0 if pool is None or pool.loop is not loop else await pool.drain(grace)
