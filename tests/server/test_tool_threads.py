"""The pool that runs ``def`` tools (mcpbind.server.threads, issue 15): one shared queue, as
few threads as needed, a watchdog that adds a thread when every thread is stuck, results
batched back to the loop, a short wait for a lone call. What must hold whatever the timing:
a blocked thread never holds up other calls (2025-11-25 server/tools.mdx §Calling Tools);
cancelling answers at once, a queued call is dropped unrun, a running one keeps its thread
until it returns (basic/utilities/cancellation.mdx); the thread bound; drain at shutdown.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import gc
import os
import threading
import weakref
from collections.abc import Callable

import anyio
import pytest

from mcpbind import Client, Server
from mcpbind import types as t
from mcpbind.server.threads import ToolThreads

pytestmark = pytest.mark.anyio

REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("REQUEST_ID", default="unset")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the pool is asyncio's


def _pool(max_threads: int = 40) -> ToolThreads:
    return ToolThreads(asyncio.get_running_loop(), max_threads)


async def _wait_until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    with anyio.fail_after(seconds):
        while not condition():  # noqa: ASYNC110 - polls state the pool's threads write
            await asyncio.sleep(0.005)


def _text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


async def test_quick_def_calls_are_answered_while_a_thread_is_blocked() -> None:
    """A ``def`` tool blocked on I/O holds the pool's only thread; quick ``def`` calls from
    another client still complete (the watchdog starts another thread) before it returns."""
    server = Server("blocked")
    release = threading.Event()
    started = threading.Event()

    @server.tool()
    def stuck() -> str:
        started.set()
        release.wait(30)
        return "released"

    @server.tool()
    def quick(n: int) -> str:
        return f"quick {n}"

    async with Client(server) as first, Client(server) as second:
        outcome: dict[str, str] = {}

        async def call_stuck() -> None:
            outcome["stuck"] = _text(await first.call_tool(t.CallToolRequestParams(name="stuck")))

        async with anyio.create_task_group() as tg:
            tg.start_soon(call_stuck)
            await anyio.to_thread.run_sync(started.wait, 10)
            with anyio.fail_after(10):
                for n in range(20):
                    params = t.CallToolRequestParams(name="quick", arguments={"n": n})
                    assert _text(await second.call_tool(params)) == f"quick {n}"
            assert "stuck" not in outcome  # all answered while the blocked call still ran
            release.set()
        assert outcome["stuck"] == "released"


async def test_results_errors_and_context_come_back_on_both_paths() -> None:
    """A lone call (the loop waits for it) and calls queued together (results batched back)
    both return the function's value, raise its exception, and run in the caller's context."""
    pool = _pool()

    def read_var() -> str:
        return REQUEST_ID.get()

    def fail() -> str:
        raise ValueError("tool failed")

    async def one(tag: str) -> str:
        REQUEST_ID.set(tag)
        return await pool.run(read_var)

    assert await asyncio.ensure_future(one("lone")) == "lone"
    with pytest.raises(ValueError, match="tool failed"):
        await pool.run(fail)
    tags = [f"call {n}" for n in range(64)]
    assert await asyncio.gather(*(one(tag) for tag in tags)) == tags
    outcomes = await asyncio.gather(*(pool.run(fail) for _ in range(8)), return_exceptions=True)
    assert all(isinstance(o, ValueError) for o in outcomes)
    assert pool.pending == 0 and pool.busy == 0
    assert REQUEST_ID.get() == "unset"  # the tools ran in copies: nothing leaked back


async def test_a_call_slower_than_the_wait_comes_back_the_usual_way() -> None:
    """A lone call that outlasts the short wait is not lost: the loop goes on and the result
    arrives through the call's future; later calls skip the wait and still work."""
    pool = _pool()
    gate = threading.Event()
    call = asyncio.ensure_future(pool.run(lambda: gate.wait(30) and "slow"))
    await _wait_until(lambda: pool.pending == 1)
    assert not call.done()  # the loop runs on while the call is blocked
    gate.set()
    with anyio.fail_after(10):
        assert await call == "slow"
    assert [await pool.run(functools.partial(int, n)) for n in range(5)] == list(range(5))


async def test_cancelling_a_queued_call_drops_it_unrun() -> None:
    pool = _pool(max_threads=1)
    gate = threading.Event()
    ran: list[str] = []
    cancelled: list[str] = []
    first = asyncio.ensure_future(pool.run(lambda: gate.wait(30)))
    await _wait_until(lambda: pool.taken == 1)
    queued = asyncio.ensure_future(
        pool.run(lambda: ran.append("queued"), lambda: cancelled.append("on_cancel"))
    )
    await asyncio.sleep(0.05)
    assert not queued.done()  # the only thread is taken: the call waits in the queue
    queued.cancel()
    with anyio.fail_after(1), pytest.raises(asyncio.CancelledError):
        await queued  # answered at once, while the thread is still blocked
    assert cancelled == ["on_cancel"]
    gate.set()
    with anyio.fail_after(10):
        assert await first is True
    assert await pool.drain(10) == 0
    assert ran == []  # dropped: a thread took it off the queue and did not run it


async def test_cancelling_a_running_call_keeps_its_thread_until_it_returns() -> None:
    pool = _pool(max_threads=2)
    gate = threading.Event()
    returned = threading.Event()
    cancelled: list[str] = []

    def blocking() -> str:
        gate.wait(30)
        returned.set()
        return "late"

    running = asyncio.ensure_future(pool.run(blocking, lambda: cancelled.append("on_cancel")))
    await _wait_until(lambda: pool.taken == 1)
    running.cancel()
    with anyio.fail_after(1), pytest.raises(asyncio.CancelledError):
        await running
    assert cancelled == ["on_cancel"]
    assert pool.busy == 1 and not returned.is_set()  # still taken: Python cannot stop it
    assert await pool.drain(0.05) == 1  # the grace runs out with the call still running
    gate.set()
    assert await pool.drain(10) == 0
    assert returned.is_set() and pool.busy == 0


async def test_blocked_calls_never_make_more_threads_than_the_bound() -> None:
    pool = _pool(max_threads=3)
    gate = threading.Event()
    calls = [
        asyncio.ensure_future(pool.run(functools.partial(_wait_then, gate, n))) for n in range(9)
    ]
    await _wait_until(lambda: pool.taken == 3)  # the watchdog added threads up to the bound
    await asyncio.sleep(0.1)  # several more watchdog rounds: still stuck, still at the bound
    assert pool.threads == 3 and pool.busy == 3 and pool.taken == 3
    gate.set()
    with anyio.fail_after(10):
        assert await asyncio.gather(*calls) == list(range(9))
    assert pool.threads == 3 and pool.pending == 0


async def test_drain_waits_for_outstanding_calls_up_to_the_grace() -> None:
    pool = _pool()
    assert await pool.drain(1) == 0  # nothing outstanding: returns at once
    gate = threading.Event()
    call = asyncio.ensure_future(pool.run(lambda: gate.wait(30)))
    await _wait_until(lambda: pool.taken == 1)
    assert await pool.drain(0.05) == 1
    threading.Timer(0.1, gate.set).start()
    assert await pool.drain(10) == 0
    assert await call is True


def _wait_then(gate: threading.Event, value: int) -> int:
    gate.wait(30)
    return value


async def test_idle_threads_wake_on_the_pipe_and_the_pool_closes_it() -> None:
    """Idle threads sleep on the pool's wake-up pipe: calls queued in bursts (several threads
    busy, bytes as hints, calls taken greedily) all run once and come back; the pipe's two
    fds are closed with the pool once its threads have ended (no fd per pool kept)."""
    pool = _pool(max_threads=3)
    fds = await _bursts_then_stop(pool)
    collected = weakref.ref(pool)
    del pool
    gc.collect()
    assert collected() is None
    for fd in fds:
        with pytest.raises(OSError):
            os.fstat(fd)


async def _bursts_then_stop(pool: ToolThreads) -> tuple[int, int]:
    before = set(threading.enumerate())
    gate = threading.Event()
    blocked = asyncio.ensure_future(pool.run(functools.partial(_wait_then, gate, -1)))
    await _wait_until(lambda: pool.taken == 1)
    for burst in range(5):  # the blocked thread holds one; the watchdog adds the others
        calls = [pool.run(functools.partial(int, burst * 100 + n)) for n in range(50)]
        with anyio.fail_after(10):
            assert await asyncio.gather(*calls) == [burst * 100 + n for n in range(50)]
        await asyncio.sleep(0.02)  # the threads go idle on the pipe between bursts
    gate.set()
    with anyio.fail_after(10):
        assert await blocked == -1
    started = set(threading.enumerate()) - before
    for _ in range(pool.threads):
        pool._idle()  # what a thread idle for _IDLE_SECONDS asks for: one thread ends
    await _wait_until(lambda: not any(thread.is_alive() for thread in started))
    await _wait_until(lambda: pool._watchdog is None)  # it stops once nothing is outstanding
    return pool._wake_r, pool._wake_w


async def test_calls_queued_while_every_thread_is_busy_wake_no_thread() -> None:
    """Only a sleeping thread is woken: a call queued while every thread runs one writes no
    byte to the pipe (no system call, and no thread woken to find nothing and contend for
    the GIL: with 20 HTTP clients on a def tool, 20 system calls per request instead of
    13.5), and the busy thread takes the queued calls before it would sleep."""
    pool = _pool(max_threads=1)  # no watchdog thread: the one thread stays busy
    gate = threading.Event()
    blocked = asyncio.ensure_future(pool.run(functools.partial(_wait_then, gate, -1)))
    await _wait_until(lambda: pool.taken == 1)
    calls = [asyncio.ensure_future(pool.run(functools.partial(int, n))) for n in range(10)]
    await _wait_until(lambda: pool.pending == 11)
    with pytest.raises(BlockingIOError):  # nothing was written
        os.read(pool._wake_r, 1)
    gate.set()
    with anyio.fail_after(10):
        assert await asyncio.gather(*calls) == list(range(10))
        assert await blocked == -1


async def test_the_watchdog_starts_no_thread_while_one_is_idle() -> None:
    """A queued call that an idle thread has not taken yet (it waits for the GIL on a busy
    loop) starts no other thread: another would not take it sooner, and on a loaded machine
    the pool would grow to its bound for nothing. Only when every thread runs a call does
    the watchdog add one (the blocked-thread tests above)."""
    pool = _pool()
    assert await pool.run(functools.partial(int, 1)) == 1  # one thread, now idle on the pipe
    await _wait_until(lambda: pool.pending == 0)
    done = asyncio.get_running_loop().create_future()
    pool._work.append((functools.partial(int, 2), [done], contextvars.copy_context(), None))
    pool.pending += 1  # queued, the thread not woken: as if it were slow to wake
    pool._taken_seen = pool.taken
    pool._watch()
    assert pool.threads == 1
    os.write(pool._wake_w, b"\0")  # the idle thread wakes and takes it
    with anyio.fail_after(10):
        assert await done == 2
    await _wait_until(lambda: pool._watchdog is None)


def test_the_pool_of_a_closed_loop_is_released() -> None:
    """Each loop's pool is held weakly: once its loop closed and its idle threads ended, it
    goes with its loop and its wake-up pipe (a program that runs ``asyncio.run`` again and
    again, or a test suite, keeps no pool, loop or file descriptors per loop); only the last
    pool used is kept, for the next call."""
    from mcpbind.server import threads

    pools: list[weakref.ref[ToolThreads]] = []
    fds: list[tuple[int, tuple[int, int]]] = []  # each pipe end and the file it was

    async def call() -> None:
        assert await threads.run_in_thread(functools.partial(int, 7)) == 7
        pool = threads.tool_threads()
        pools.append(weakref.ref(pool))
        for fd in (pool._wake_r, pool._wake_w):
            info = os.fstat(fd)
            fds.append((fd, (info.st_dev, info.st_ino)))

    idle, threads._IDLE_SECONDS = threads._IDLE_SECONDS, 0.05
    try:
        for _ in range(3):
            before = set(threading.enumerate())
            asyncio.run(call())
            for thread in set(threading.enumerate()) - before:
                thread.join(10)  # ends once idle (its loop is closed)
    finally:
        threads._IDLE_SECONDS = idle
    gc.collect()
    assert [ref() is None for ref in pools] == [True, True, False]  # the last one is kept
    for fd, pipe in fds[:4]:
        # Closed: the number is free, or (other threads of a pytest-xdist worker open files
        # too) already names another file, never that pipe.
        try:
            info = os.fstat(fd)
        except OSError:
            continue
        assert (info.st_dev, info.st_ino) != pipe, f"fd {fd} still holds its wake-up pipe"
