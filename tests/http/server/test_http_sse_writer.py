"""The SSE writer of a request's stream under a flood (issue 28, F3 and F4): building a
response from thousands of queued events is linear and does not hold the event loop (another
session's ping is not kept waiting), and a client that stops reading a flooding response
holds a bounded number of events, all released when it goes away."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anyio
import pytest

from mcpbind import Context, Server
from mcpbind.http import StreamableHTTPApp
from mcpbind.http.server.http_session import HttpSession
from mcpbind.http.server.responses import reply_sse
from mcpbind.http.server.streams import MAX_PENDING, Outbox, Stream

from ._raw import asgi_call
from ._support import headers, init_body, make_server

pytestmark = pytest.mark.anyio

EVENTS = 16_000
FLOOD = 20_000
HOST = "127.0.0.1:8000"
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


async def test_a_client_that_stops_reading_holds_a_bounded_number_of_events() -> None:
    """A tool floods its request's SSE stream while the client reads nothing (the response's
    ``send`` never completes): the handler waits for room (backpressure) instead of queueing
    every event (1.29 GB before the fix). When the client goes away the handler goes on, its
    response is dropped with the stream, and nothing stays attached to the session."""
    server = Server("flood")
    produced = 0
    finished = asyncio.Event()

    @server.tool()
    async def flood(n: int, ctx: Context) -> str:
        nonlocal produced
        for i in range(n):
            await ctx.report_progress(i, n, "x" * 100)
            produced += 1
        finished.set()
        return "flooded"

    app = StreamableHTTPApp(server)
    status, got, _ = await asgi_call(
        app,
        headers=list(headers(version=None, host=HOST).items()),
        chunks=[json.dumps(init_body()).encode()],
    )
    assert status == 200
    session_id = got["mcp-session-id"]
    session_headers = headers(session_id, host=HOST)
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    status, _, _ = await asgi_call(
        app, headers=list(session_headers.items()), chunks=[json.dumps(initialized).encode()]
    )
    assert status == 202

    stalled = asyncio.Event()
    gone = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            stalled.set()  # the client stopped reading: this write never completes ...
            await gone.wait()
            raise OSError("connection lost")  # ... until the client goes away

    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "flood", "arguments": {"n": FLOOD}, "_meta": {"progressToken": 1}},
    }
    body = [json.dumps(call).encode()]

    async def receive() -> dict[str, Any]:
        if body:
            return {"type": "http.request", "body": body.pop(), "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(k.encode(), v.encode()) for k, v in session_headers.items()],
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 5000),
    }
    post = asyncio.get_running_loop().create_task(app(scope, receive, send))
    with anyio.fail_after(10):
        await stalled.wait()
    for _ in range(2000):  # let the handler run as far as it can (bounded)
        if finished.is_set():
            break
        await asyncio.sleep(0)
    # Without a bound the handler ran to the end with every event queued.
    assert not finished.is_set(), f"all {produced} events were queued for a stalled client"
    assert produced <= 2 * MAX_PENDING + 1  # one outbox full, one taken by the stuck write
    gone.set()
    with anyio.fail_after(10):
        await finished.wait()
        await post
    session = app.sessions[session_id]
    assert not session.attached and not session.busy
    await app.aclose()
