"""``RedisEventStore``: resumable SSE streams (basic/transports.mdx, Streamable HTTP,
"Resumability and Redelivery") with their events in Redis, bounded per stream and expiring,
readable by every worker; a dropped stream resumed with ``Last-Event-ID`` delivers each event
exactly once."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import httpx2 as httpx
import pytest

from mcpbind.http.server.redis_events import RedisEventStore

from .processes import worker
from .wire import HANDSHAKE, SSE, numbered, open_session

pytestmark = pytest.mark.anyio


def _stream() -> str:
    return uuid.uuid4().hex


async def test_replays_after_a_cursor_and_refuses_what_it_cannot(redis_url: str) -> None:
    """The :class:`EventStore` contract: the events after ``n`` in order; ``None`` for a
    cursor past the last event, for events trimmed away, and for an unknown stream past the
    priming event."""
    store = RedisEventStore(redis_url, max_events=3)
    try:
        stream = _stream()
        assert await store.events_after(stream, 0) == []  # only the priming event so far
        assert await store.events_after(stream, 1) is None
        for n in range(1, 6):
            await store.store_event(stream, n, b'{"n":%d}' % n)
        assert await store.events_after(stream, 2) == [
            (3, b'{"n":3}'),
            (4, b'{"n":4}'),
            (5, b'{"n":5}'),
        ]
        assert await store.events_after(stream, 5) == []
        assert await store.events_after(stream, 6) is None  # from the future
        assert await store.events_after(stream, 1) is None  # event 2 was trimmed: a gap
        await store.forget_stream(stream)
        assert await store.events_after(stream, 3) is None
    finally:
        await store.close()


async def test_events_written_by_one_worker_are_read_by_another(redis_url: str) -> None:
    """Two stores (two workers) on one Redis see one history once it is written (behind the
    live stream: ``flush`` waits for it); writes racing on one stream land in event order."""
    writer, reader = RedisEventStore(redis_url), RedisEventStore(redis_url)
    try:
        stream = _stream()
        await asyncio.gather(*(writer.store_event(stream, n, b"m%d" % n) for n in range(1, 51)))
        await writer.flush()
        assert await reader.events_after(stream, 0) == [(n, b"m%d" % n) for n in range(1, 51)]
    finally:
        await writer.close()
        await reader.close()


async def test_a_stream_expires_after_its_last_event(redis_url: str) -> None:
    """``ttl``: Redis drops a stream that has been quiet for that long (no sweeper)."""
    store = RedisEventStore(redis_url, ttl=1.0)
    try:
        stream = _stream()
        await store.store_event(stream, 1, b"one")
        assert await store.events_after(stream, 0) == [(1, b"one")]
        await asyncio.sleep(1.5)
        assert await store.events_after(stream, 1) is None
    finally:
        await store.close()


async def test_a_read_overlapping_a_write_round_misses_no_event(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resume (Resumability and Redelivery) replays every event stored before it. Forced
    interleaving: Redis answers the read before the write round reaches it, and the round
    lands (its events leave memory) before the read's answer is taken; event 2 was then in
    neither place the read looked, and the replay silently skipped it."""
    import redis.asyncio
    import redis.asyncio.client

    store = RedisEventStore(redis_url)
    stream = _stream()
    read_answered = asyncio.Event()
    execute = redis.asyncio.client.Pipeline.execute
    lrange = redis.asyncio.Redis.lrange

    async def round_after_the_read(pipe: Any, *args: Any, **kwargs: Any) -> Any:
        await read_answered.wait()
        return await execute(pipe, *args, **kwargs)

    async def read_answered_before_the_round(client: Any, *args: Any) -> Any:
        entries = await lrange(client, *args)
        read_answered.set()
        await store.flush()  # the round lands before the reader goes on
        return entries

    try:
        await store.store_event(stream, 1, b"one")
        read_answered.set()
        await store.flush()  # event 1 is in Redis
        read_answered.clear()
        monkeypatch.setattr(redis.asyncio.client.Pipeline, "execute", round_after_the_read)
        monkeypatch.setattr(redis.asyncio.Redis, "lrange", read_answered_before_the_round)
        await store.store_event(stream, 2, b"two")  # in memory, its round waiting
        assert await store.events_after(stream, 0) == [(1, b"one"), (2, b"two")]
        assert store.backlog == 0  # the round did land during the read
    finally:
        monkeypatch.undo()
        await store.close()


async def test_redis_down_is_an_error_not_a_hang() -> None:
    """Nothing listening: the store raises within its timeout."""
    import redis.exceptions

    store = RedisEventStore("redis://127.0.0.1:1/0", timeout=0.2)
    try:
        with pytest.raises(redis.exceptions.ConnectionError):
            await asyncio.wait_for(store.events_after(_stream(), 0), 5)
    finally:
        await store.close()


def _call(rid: int, to: int) -> dict[str, Any]:
    params = {"name": "count", "arguments": {"to": to}, "_meta": {"progressToken": "p"}}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def test_a_dropped_stream_resumes_with_each_event_exactly_once(redis_url: str) -> None:
    """transports.mdx, Resumability and Redelivery: the client drops a tool call's stream
    after a few events and resumes it with ``Last-Event-ID``; every progress notification and
    the result arrive exactly once, in order. The events are in Redis while the stream lives
    (another store, any worker, reads them); once the stream is delivered whole, they go."""
    with worker("w0", options={"redis_events": redis_url}) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        with httpx.Client(timeout=10) as http:
            session = open_session(http, url)
            headers = {**SSE, "mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
            with http.stream("POST", url, json=_call(7, 25), headers=headers) as response:
                assert response.status_code == 200
                stream, got = numbered(response, 4)  # the connection drops here
            seen = asyncio.run(_read_when(redis_url, stream, lambda kept: len(kept) >= 4))
            assert [n for n, _ in seen[:4]] == [1, 2, 3, 4]
            resume = {**headers, "accept": "text/event-stream", "last-event-id": f"{stream}.4"}
            with http.stream("GET", url, headers=resume) as response:
                assert response.status_code == 200
                got += numbered(response)[1]
            numbers = [n for n, _ in got]
            assert numbers == list(range(1, 27))  # 25 progress events and the result
            progress = [m["params"]["progress"] for _, m in got if m.get("method")]
            assert progress == list(range(1, 26))
            assert got[-1][1]["id"] == 7 and got[-1][1]["result"]["structuredContent"] == {
                "result": 25
            }
            assert asyncio.run(_read_when(redis_url, stream, lambda kept: not kept)) == []
            # Delivered whole: resuming it again is refused (nothing kept, nothing twice).
            assert http.get(url, headers=resume).status_code == 404
            assert http.delete(url, headers=headers).status_code == 200


async def _read_when(
    redis_url: str, stream: str, done: Callable[[list[tuple[int, bytes]]], bool]
) -> list[tuple[int, bytes]]:
    """The stream's events as another worker's store reads them from Redis, once ``done``
    holds for them (within 5 s)."""
    other = RedisEventStore(redis_url)
    try:
        for _ in range(100):
            kept = await other.events_after(stream, 0) or []
            if done(kept):
                return kept
            await asyncio.sleep(0.05)
        raise AssertionError(f"Redis holds {[n for n, _ in kept]} of stream {stream}")
    finally:
        await other.close()
