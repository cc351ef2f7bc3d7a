"""A session registry whose Redis stalls under load (issue 30, cause 2 of the soak's errors: one
503 from a lookup that timed out), played by a real redis-server paused with SIGSTOP.

docs/guides/deployment.md, "Failure modes": a request for a session owned by another worker
needs the registry; while Redis is unreachable it gets 503 with ``Retry-After``, never a
hang. A lookup that times out is now tried once more before that 503 (each try bounded by
the 0.5 s timeout): a stall shorter than two timeouts, of Redis or of the worker's own event
loop, fails nothing, and a Redis that stays away still gets its 503 within two timeouts.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx2 as httpx

from .processes import paused, redis_process, workers
from .wire import ADD, HANDSHAKE, SSE, messages, open_session

TIMEOUT = 0.5
"""The registry's Redis timeout (its default)."""


def _forwarded_call(
    redis: subprocess.Popen[bytes], owner: int, other: int, stall: float | None
) -> httpx.Response:
    """A session opened on the worker at ``owner``; a call for it sent to ``other`` (which
    looks the owner up in the registry) while Redis stalls ``stall`` seconds (``None``:
    throughout)."""
    with httpx.Client(timeout=10) as http:
        session = open_session(http, f"http://127.0.0.1:{owner}/mcp")
        headers = {**SSE, "mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
        with paused(redis, stall):
            return http.post(
                f"http://127.0.0.1:{other}/mcp",
                json=ADD,
                headers=headers,
            )


def test_a_registry_lookup_that_times_out_once_is_tried_again(tmp_path: Path) -> None:
    """Redis stalls 0.75 s, longer than one lookup's timeout (0.5 s), shorter than two: the
    forwarded call is answered by the session's owner, not refused with 503."""
    with (
        redis_process(tmp_path) as (url, redis),
        workers(2, options={"redis_sessions": url}) as (
            w0,
            w1,
        ),
    ):
        response = _forwarded_call(redis, w0, w1, 1.5 * TIMEOUT)
        assert response.status_code == 200, response.text
        (answer,) = messages(response)
        assert answer["result"]["structuredContent"] == {"result": 3}
        assert response.headers.get_list("x-test-worker") == ["w0", "w1"]


def test_a_registry_that_stays_away_is_a_503_within_two_timeouts(tmp_path: Path) -> None:
    """Redis stopped throughout: 503 with ``Retry-After`` and a one-line JSON-RPC error, after
    two lookups' timeouts, never a hang."""
    with (
        redis_process(tmp_path) as (url, redis),
        workers(2, options={"redis_sessions": url}) as (
            w0,
            w1,
        ),
    ):
        started = time.monotonic()
        response = _forwarded_call(redis, w0, w1, None)
        took = time.monotonic() - started
        assert response.status_code == 503
        assert response.headers["retry-after"] == "1"
        error = response.json()["error"]
        assert "\n" not in error["message"] and "registry" in error["message"]
        assert took < 2 * TIMEOUT + 1.5  # two lookups, plus the test's own session set-up
