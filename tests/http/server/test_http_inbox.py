"""A session's inbox of POST bodies (``mcpbind.http.server.streams.SessionInbox``): bounded, in order, and
allocating nothing while empty (issue 15: an idle session's memory). A client that posts
faster than the session reads waits instead of growing the queue (basic/transports.mdx,
"Sending Messages to the Server": each POST's messages are handed to the session in order)."""

from __future__ import annotations

import asyncio

import pytest

from mcpbind.http.server.streams import SessionInbox

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the inbox is asyncio-only, like the HTTP app


async def test_bodies_come_out_in_order_and_a_full_inbox_makes_put_wait() -> None:
    inbox = SessionInbox(2)
    await inbox.put(b"1")
    await inbox.put(b"2")
    with pytest.raises(asyncio.QueueFull):
        inbox.put_nowait(b"x")
    third = asyncio.create_task(inbox.put(b"3"))
    await asyncio.sleep(0.01)
    assert not third.done()  # waits for room
    assert await inbox.get() == b"1"
    await asyncio.wait_for(third, 5)
    assert [await inbox.get(), await inbox.get()] == [b"2", b"3"]


async def test_get_waits_for_a_body_and_a_cancelled_putter_wakes_no_one_wrongly() -> None:
    inbox = SessionInbox(1)
    getter = asyncio.create_task(inbox.get())
    await asyncio.sleep(0.01)
    inbox.put_nowait(b"a")
    assert await asyncio.wait_for(getter, 5) == b"a"
    inbox.put_nowait(b"b")
    cancelled = asyncio.create_task(inbox.put(b"never"))
    waiting = asyncio.create_task(inbox.put(b"c"))
    await asyncio.sleep(0.01)
    cancelled.cancel()
    await asyncio.sleep(0.01)
    assert await inbox.get() == b"b"
    await asyncio.wait_for(waiting, 5)  # the live putter got the room, not the cancelled one
    assert await inbox.get() == b"c"
