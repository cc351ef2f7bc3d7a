"""What the event store leaves in Redis (issue 30, cause 4 of the soak: ``used_memory`` grew
from 9.4 to 60.2 MiB in 10 minutes, every SSE stream's events kept for an hour).

basic/transports.mdx, Streamable HTTP, "Resumability and Redelivery": a resume replays the
events of *that* stream after the cursor; a stream delivered whole (its last response
handed to a connection) is never resumed, and a session that ended (``DELETE``, Session
Management; or its idle expiry) has no stream left to resume. So Redis holds the events of
streams still live or dropped before their end, each with a bounded TTL, and nothing once
the session ends (docs/guides/deployment.md, "What Redis holds")."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx

from mcpbind.http.server.events import parse_event_id

from .processes import redis_process, worker
from .wire import HANDSHAKE, SSE, iter_events, open_session

TTL = 600.0
"""``RedisEventStore``'s default ``ttl``: seconds a stream outlives its last event."""


def _call(rid: int, to: int) -> dict[str, Any]:
    params = {"name": "count", "arguments": {"to": to}, "_meta": {"progressToken": rid}}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def _event_keys(url: str, until: Callable[[list[bytes]], bool]) -> list[bytes]:
    """The event store's keys in the Redis at ``url`` once ``until`` holds for them (the
    store writes behind its streams: within 5 s)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        for _ in range(100):
            keys = sorted(client.keys("mcpbind:events:*"))
            if until(keys):
                return keys
            time.sleep(0.05)
        return keys
    finally:
        client.close()


def _ttl_ms(url: str, key: bytes) -> int:
    import redis

    client = redis.Redis.from_url(url)
    try:
        return int(client.pttl(key))
    finally:
        client.close()


def test_redis_holds_only_the_streams_a_client_may_resume(tmp_path: Path) -> None:
    """20 tool calls read to their end leave no key; a call dropped after 3 of its 30 events
    leaves its stream's key, expiring within ``ttl``; the session's ``DELETE`` removes it."""
    with (
        redis_process(tmp_path) as (url, _redis),
        worker("w0", options={"redis_events": url}) as port,
    ):
        mcp = f"http://127.0.0.1:{port}/mcp"
        with httpx.Client(timeout=10) as http:
            session = open_session(http, mcp)
            headers = {**SSE, "mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
            for rid in range(1, 21):
                with http.stream("POST", mcp, json=_call(rid, 3), headers=headers) as response:
                    events = [e for e in iter_events(response) if e.message is not None]
                assert [e.message["params"]["progress"] for e in events[:3]] == [1, 2, 3]
                assert events[-1].message["result"]["structuredContent"] == {"result": 3}
            # Wait long enough for the writes behind the streams to have reached Redis.
            time.sleep(0.3)
            assert _event_keys(url, lambda keys: not keys) == []

            with http.stream("POST", mcp, json=_call(99, 30), headers=headers) as response:
                for event in iter_events(response):
                    if event.message is not None and event.message.get("method"):
                        assert event.id is not None
                        stream, n = parse_event_id(event.id) or ("", -1)
                        if n == 3:
                            break  # dropped: the client may resume it
            key = f"mcpbind:events:{stream}".encode()
            assert _event_keys(url, lambda keys: bool(keys)) == [key]
            assert 0 < _ttl_ms(url, key) <= TTL * 1000

            assert http.delete(mcp, headers=headers).status_code == 200
            assert _event_keys(url, lambda keys: not keys) == []
