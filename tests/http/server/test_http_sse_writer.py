"""The SSE writer of a request's stream under a flood (issue 28, F3 and F4): building a
response from thousands of queued events is linear and does not hold the event loop (another
session's ping is not kept waiting), and a client that stops reading a flooding response
holds a bounded number of events, all released when it goes away."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpbind.http.server.responses import reply_sse
from mcpbind.http.server.session import HttpSession
from mcpbind.http.server.streams import Outbox, Stream

from ._support import make_server

pytestmark = pytest.mark.anyio

EVENTS = 16_000
#: A progress notification as the server encodes it (about 130 bytes).
PROGRESS = (
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":'
    b'{"progressToken":"t","progress":1234,"total":16000,"message":"working on it"}}'
)


async def _never_disconnects() -> dict[str, Any]:
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


async def test_thousands_of_queued_events_are_one_linear_write() -> None:
    """16,000 queued progress notifications took 21 s of the event loop (each event copied
    the chunk built so far); a task of another session waiting meanwhile must run within a
    fraction of that. The margin is generous (the machine is loaded): the linear build takes
    milliseconds."""
    session = HttpSession(make_server(), "s")
    stream = Stream("r1", pending={1})
    outbox = Outbox()
    session.attach(stream, outbox)
    for n in range(1, EVENTS + 1):
        outbox.put((n, PROGRESS))
    outbox.close()
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    loop = asyncio.get_running_loop()
    worst = 0.0
    ticking = True

    async def other_session() -> None:  # what a ping on another session needs: a turn
        nonlocal worst
        while ticking:
            before = loop.time()
            await asyncio.sleep(0)
            worst = max(worst, loop.time() - before)

    other = loop.create_task(other_session())
    await asyncio.sleep(0)
    await reply_sse(
        session,
        stream,
        outbox,
        send,
        _never_disconnects,
        [],
        head=b"",
        last=0,
        replay=(),
        keepalive=None,
    )
    ticking = False
    await other
    body = b"".join(m.get("body", b"") for m in sent)
    assert body.count(b"event: message\ndata: " + PROGRESS + b"\n\n") == EVENTS
    assert worst < 2.0, f"the event loop was held {worst:.1f} s by one response"
