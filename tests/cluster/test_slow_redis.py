"""An event store whose Redis stalls under load (issue 30, cause 1 of the soak's errors),
played by a real redis-server paused with SIGSTOP and resumed with SIGCONT.

basic/transports.mdx, Streamable HTTP, "Resumability and Redelivery": a server *may* replay a
stream's events; the stream itself is what the client waits on. The store's writes used to
sit between an event and its delivery, 0.5 s at most, then fail: the failure ended the SSE
stream, and the client's resume got 404 (500 here). Now an event is delivered live at once
and written behind; while Redis stalls the stream goes on, a resume is served from what the
worker still holds, and the session lives.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from mcpbind.http.server.redis_events import RedisEventStore

from .processes import paused, redis_process, worker
from .wire import HANDSHAKE, SSE, messages, numbered, open_session

TIMEOUT = 0.5
"""The Redis timeout of the event store and the registry (their default)."""


def _call(rid: int, name: str, arguments: dict[str, Any], token: str | None = None) -> Any:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def test_a_stalled_event_store_loses_neither_the_stream_nor_the_session(tmp_path: Path) -> None:
    """Redis stopped for the whole call: the 25 progress events and the result are sent live;
    the client drops the stream after 4 and resumes it with ``Last-Event-ID`` (still no
    Redis): each event arrives exactly once, in order. Redis back, the session goes on."""
    with (
        redis_process(tmp_path) as (url, redis),
        worker("w0", options={"redis_events": url}) as port,
    ):
        mcp = f"http://127.0.0.1:{port}/mcp"
        with httpx.Client(timeout=10) as http:
            session = open_session(http, mcp)
            headers = {**SSE, "mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
            with paused(redis):
                started = time.monotonic()
                body = _call(7, "count", {"to": 25}, token="p")
                with http.stream("POST", mcp, json=body, headers=headers) as response:
                    assert response.status_code == 200
                    stream, got = numbered(response, 4)  # the connection drops here
                # Live, not 0.5 s a write: 4 events 20 ms apart.
                assert time.monotonic() - started < 4 * TIMEOUT
                resume = {**headers, "accept": "text/event-stream", "last-event-id": f"{stream}.4"}
                with http.stream("GET", mcp, headers=resume) as response:
                    assert response.status_code == 200, response.read()
                    got += numbered(response)[1]
            assert [n for n, _ in got] == list(range(1, 27))
            assert [m["params"]["progress"] for _, m in got if m.get("method")] == list(
                range(1, 26)
            )
            assert got[-1][1]["result"]["structuredContent"] == {"result": 25}
            response = http.post(mcp, json=_call(8, "add", {"a": 2, "b": 3}), headers=headers)
            assert response.status_code == 200
            (answer,) = messages(response)
            assert answer["result"]["structuredContent"] == {"result": 5}
            assert http.delete(mcp, headers=headers).status_code == 200


@pytest.mark.anyio
async def test_a_store_behind_its_redis_lets_the_worker_run(tmp_path: Path) -> None:
    """A handler emitting in a loop to a connection that is gone waits on nothing but the
    store; with Redis stalled and 100 events of the stream waiting for it, each further
    event yields once, so the worker's other requests (a ticker here) go on meanwhile."""
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    with redis_process(tmp_path) as (url, redis), paused(redis):
        store = RedisEventStore(url)
        running = asyncio.ensure_future(ticker())
        try:
            for n in range(1, 301):
                await store.store_event("flooded", n, b"x")
            assert ticks >= 100
            assert await store.events_after("flooded", 250) == [(n, b"x") for n in range(251, 301)]
        finally:
            running.cancel()
            await store.close()
