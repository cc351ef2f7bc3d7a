"""The HTTP server's shared clock for per-request timers (``mcpbind.http.server.ticks``): body
read deadlines (basic/transports.mdx §Security Warning: a stalled body gets 408) and the delay
before a request watches for its client leaving, without a timer handle per request."""

from __future__ import annotations

import asyncio

import pytest

from mcpbind.http.server._asgi import BodyError, Message, read_body
from mcpbind.http.server.ticks import TICK, ticks

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the HTTP app is asyncio-only


async def test_armed_timers_fire_once_disarmed_ones_never_and_the_clock_stops() -> None:
    clock = ticks()
    assert ticks() is clock  # one per loop
    fired: list[str] = []
    clock.arm("a", 0.0, lambda: fired.append("a"))
    clock.arm("b", 0.0, lambda: fired.append("b"))
    clock.disarm("b")
    for _ in range(200):
        if fired:
            break
        await asyncio.sleep(TICK)
    assert fired == ["a"]
    await asyncio.sleep(TICK * 3)
    assert fired == ["a"] and clock._handle is None  # nothing armed: no handle left


async def test_a_stalled_body_gets_408_and_the_task_is_not_left_cancelled() -> None:
    stalled: asyncio.Future[Message] = asyncio.get_running_loop().create_future()

    async def receive() -> Message:
        return await stalled

    with pytest.raises(BodyError) as info:
        await read_body(receive, 1024, 0.05)
    assert info.value.status == 408
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0
    await asyncio.sleep(0)  # no cancellation left pending for this task


async def test_a_cancellation_that_is_not_the_deadline_goes_through() -> None:
    never: asyncio.Future[Message] = asyncio.get_running_loop().create_future()

    async def receive() -> Message:
        return await never

    reader = asyncio.create_task(read_body(receive, 1024, 30.0))
    await asyncio.sleep(0)
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader


async def test_a_complete_body_is_read_and_disarms_its_deadline() -> None:
    parts = [
        {"type": "http.request", "body": b"ab", "more_body": True},
        {"type": "http.request", "body": b"c", "more_body": False},
    ]

    async def receive() -> Message:
        return parts.pop(0)

    assert await read_body(receive, 1024, 30.0) == b"abc"
    await asyncio.sleep(TICK * 3)
    assert ticks()._handle is None
