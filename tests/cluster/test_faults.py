"""Faults of a cluster (docs/guides/deployment.md, failure modes): a worker killed with
SIGKILL takes only its own sessions (404, so clients re-initialize, transports.mdx, Session
Management); Redis down or hung gives a clear 503 within the timeout to what needs the
registry, while the 2026-07-28 wire and a worker's own sessions keep working."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx2 as httpx

from .processes import redis_process, worker_process
from .wire import HANDSHAKE, SSE, call, open_session


def _ping(http: httpx.Client, url: str, session: str) -> httpx.Response:
    headers = {**SSE, "mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
    return http.post(url, json={"jsonrpc": "2.0", "id": 9, "method": "ping"}, headers=headers)


def test_a_killed_worker_takes_only_its_own_sessions(redis_url: str) -> None:
    options = {"redis_sessions": redis_url}
    with (
        worker_process("w0", options=options) as (p0, w0),
        worker_process("w1", options=options) as (p1, _),
        httpx.Client(timeout=10) as http,
    ):
        first, second = f"http://127.0.0.1:{p0}/mcp", f"http://127.0.0.1:{p1}/mcp"
        doomed, survivor = open_session(http, first), open_session(http, second)
        assert _ping(http, second, doomed).status_code == 200  # forwarded to w0
        os.kill(w0.pid, signal.SIGKILL)
        w0.wait(5)
        gone = _ping(http, second, doomed)
        assert gone.status_code == 404
        assert gone.json()["error"]["code"] == -32001
        assert _ping(http, second, survivor).status_code == 200
        assert _ping(http, second, doomed).status_code == 404  # its entry is gone now


def test_redis_down_or_hung_is_a_503_never_a_hang(tmp_path: Path) -> None:
    with redis_process(tmp_path) as (redis_url, redis):
        options = {"redis_sessions": redis_url}
        with (
            worker_process("w0", options=options) as (p0, _),
            worker_process("w1", options=options) as (p1, _),
            httpx.Client(timeout=10) as http,
        ):
            owner, other = f"http://127.0.0.1:{p0}/mcp", f"http://127.0.0.1:{p1}/mcp"
            session = open_session(http, owner)
            for fault in (signal.SIGSTOP, signal.SIGKILL):  # hung, then gone
                os.kill(redis.pid, fault)
                started = time.monotonic()
                init = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": HANDSHAKE,
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "0"},
                    },
                }
                refused = http.post(other, json=init, headers=SSE)
                assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
                elsewhere = _ping(http, other, session)
                assert elsewhere.status_code == 503
                assert time.monotonic() - started < 3.0  # two timeouts of 0.5 s, not a hang
                assert _ping(http, owner, session).status_code == 200  # held here: no Redis
                _, answer = call(http, other, 1, "add", {"arguments": {"a": 1, "b": 2}})
                assert answer["result"]["structuredContent"] == {"result": 3}  # 2026-07-28
                if fault == signal.SIGSTOP:
                    os.kill(redis.pid, signal.SIGCONT)
