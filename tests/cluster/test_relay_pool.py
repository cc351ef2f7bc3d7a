"""Forwarding to a session's owner is not bounded by a connection pool (issue 30, the soak's
multi-second echo latencies): a relayed GET stream holds its connection to the owner for the
session's life, so with httpx's default pool (100 connections) the 101st forwarded request,
stream or call, waited without a timeout behind them. The inbound connections bound the
relayed ones (transports.mdx §Listening for Messages from the Server: a GET stream per session).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import anyio
import httpx2 as httpx
import pytest

from .processes import redis_process, workers
from .wire import ADD, HANDSHAKE, SSE, messages, open_session

pytestmark = pytest.mark.anyio

STREAMS = 110
"""Forwarded GET streams held open at once: more than httpx's default pool."""


async def test_forwarded_streams_beyond_a_pool_stall_no_forwarded_request(
    tmp_path: Path,
) -> None:
    options = {"redis_sessions": "", "max_sessions_per_client": 1000}
    with (
        redis_process(tmp_path) as (url, _redis),
        workers(2, options={**options, "redis_sessions": url}) as (w0, w1),
    ):
        with httpx.Client(timeout=10) as http:
            sessions = [
                open_session(http, f"http://127.0.0.1:{w0}/mcp") for _ in range(STREAMS + 1)
            ]
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
        async with (
            httpx.AsyncClient(timeout=10, limits=limits) as client,
            contextlib.AsyncExitStack() as streams,
        ):
            with anyio.fail_after(30):  # the old pool: the 101st stream never opened
                for session in sessions[:STREAMS]:
                    headers = {
                        "accept": "text/event-stream",
                        "mcp-session-id": session,
                        "mcp-protocol-version": HANDSHAKE,
                    }
                    stream = client.stream("GET", f"http://127.0.0.1:{w1}/mcp", headers=headers)
                    response = await streams.enter_async_context(stream)
                    assert response.status_code == 200
                    assert response.headers.get_list("x-test-worker") == ["w0", "w1"]
            headers = {**SSE, "mcp-session-id": sessions[-1], "mcp-protocol-version": HANDSHAKE}
            with anyio.fail_after(10):
                answer = await client.post(f"http://127.0.0.1:{w1}/mcp", json=ADD, headers=headers)
            assert answer.status_code == 200, answer.text
            (message,) = messages(answer)
            assert message["result"]["structuredContent"] == {"result": 3}
