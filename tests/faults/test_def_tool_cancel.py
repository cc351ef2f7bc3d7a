"""Issue 16 (3): cancelling a ``def`` tool (basic/utilities/cancellation.mdx: the receiver
SHOULD stop processing; Python cannot interrupt a thread, so the tool is told instead).

- the tool's ``ctx.cancelled`` turns true in its thread and stays true;
- the thread keeps its slot in the bounded pool until the function returns, so
  call-then-cancel floods cannot grow the thread count past the bound;
- on stdin EOF a stdio server waits at most ``THREAD_GRACE`` for such threads, then exits.
"""

from __future__ import annotations

import asyncio
import threading
import time

import anyio
import pytest

from mcpbind import Client, Context, Server
from mcpbind.server.session import THREAD_GRACE, ServerSession
from mcpbind.server.threads import ToolThreads, tool_threads
from mcpbind.transports import memory_pair

from .test_stdio_malformed import handshake, raw_server, request

pytestmark = pytest.mark.anyio


def _tool_threads() -> int:
    return sum(t.name == "mcpbind tool thread" and t.is_alive() for t in threading.enumerate())


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the pool is asyncio's (trio keeps anyio's worker threads)


async def test_cancelled_def_tool_sees_the_flag_in_its_thread() -> None:
    server = Server("def-cancel")
    saw = threading.Event()
    started = threading.Event()

    @server.tool()
    def patient(ctx: Context) -> str:
        started.set()
        deadline = time.monotonic() + 10
        while not ctx.cancelled and time.monotonic() < deadline:
            time.sleep(0.005)
        if ctx.cancelled:
            saw.set()
        return "done"

    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(ServerSession(server, server_end).run)
        async with Client(client_end) as client:
            with anyio.move_on_after(10) as scope:
                async with anyio.create_task_group() as calls:
                    calls.start_soon(client.call, "patient")
                    await anyio.to_thread.run_sync(started.wait, 10)
                    calls.cancel_scope.cancel()  # the client sends notifications/cancelled
                assert await anyio.to_thread.run_sync(saw.wait, 10)
            assert not scope.cancelled_caught
            assert await client.ping() is not None
        tg.cancel_scope.cancel()


async def test_call_then_cancel_flood_keeps_the_thread_bound() -> None:
    """150 call-then-cancel pairs used to make 151 threads; the pool stays at its bound and
    each slot is freed only when its function really returns."""
    pool = ToolThreads(asyncio.get_running_loop(), max_threads=8)
    gate = threading.Event()
    before = _tool_threads()
    flags: list[bool] = []

    async def call_then_cancel() -> None:
        task = asyncio.ensure_future(pool.run(gate.wait, lambda: flags.append(True)))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    await asyncio.gather(*(call_then_cancel() for _ in range(150)))
    assert pool.busy <= 8 and _tool_threads() - before <= 8
    gate.set()
    assert await pool.drain(10) == 0
    assert _tool_threads() - before <= 8
    # The pool still works after the flood, on the same threads.
    assert await pool.run(lambda: 42) == 42
    assert _tool_threads() - before <= 8


async def test_a_waiting_call_gets_the_slot_a_finished_thread_frees() -> None:
    pool = ToolThreads(asyncio.get_running_loop(), max_threads=1)
    gate = threading.Event()
    first = asyncio.ensure_future(pool.run(gate.wait))
    second = asyncio.ensure_future(pool.run(lambda: "second"))
    await asyncio.sleep(0.05)
    assert not second.done() and pool.busy == 1
    gate.set()
    with anyio.fail_after(10):
        assert await first is True
        assert await second == "second"


async def test_loop_pool_is_shared_and_bounded_by_default() -> None:
    assert tool_threads() is tool_threads()
    assert tool_threads().max_threads == 40


async def test_stdio_server_exits_after_the_grace_despite_a_stuck_def_tool() -> None:
    """Stdin EOF with a ``def`` tool stuck for an hour: the server used to wait for it
    (29.8 s in the attack, forever for a stuck tool); now it exits after the grace."""
    async with raw_server() as peer:
        await handshake(peer)
        await peer.send(request(1, "tools/call", {"name": "block", "arguments": {"seconds": 3600}}))
        await anyio.sleep(0.2)  # the call reaches its thread
        start = time.monotonic()
        status, _ = await peer.close_and_wait(timeout=THREAD_GRACE + 15)
        assert status == 0
        assert time.monotonic() - start < THREAD_GRACE + 10
