"""A session that ends under a busy client (issue 30, cause 3 of the soak's errors: two
``400 Mcp-Session-Id required``).

basic/transports.mdx, Session Management: a request for a session the server no longer has
gets 404, and the client "MUST start a new session by sending a new InitializeRequest without
a session ID attached"; every other request carries the session id. mcpbind's client used to
drop its session id while it re-initialized, so a request another task sent meanwhile went
without any id and got 400 (an error for the caller, where waiting for the new session, or
a 404 and a retry on it, loses nothing). Here several tasks call through haproxy round-robin
over two workers while the session is deleted under them: every call succeeds, and no
request without a session id other than the ``initialize`` requests reaches a worker.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx2 as httpx
import pytest

from mcpbind import Client, json_value
from mcpbind.http import StreamableHTTPTransport

from .processes import haproxy, workers
from .wire import HANDSHAKE

pytestmark = pytest.mark.anyio

CALLERS = 10
ROUNDS = 8
"""The session is deleted under the callers this many times."""


async def test_calls_sent_while_the_client_reinitializes_keep_their_session(
    redis_url: str, tmp_path: Path
) -> None:
    sent: list[tuple[str, str | None]] = []  # (JSON-RPC method or HTTP method, session id)

    async def record(request: httpx.Request) -> None:
        body = json.loads(request.content) if request.method == "POST" else {}
        method = body.get("method", "response") if isinstance(body, dict) else "batch"
        sent.append(
            (
                method if request.method == "POST" else request.method,
                request.headers.get("mcp-session-id"),
            )
        )

    failures: list[str] = []
    answered = 0
    sessions: list[str | None] = []
    options = {"redis_sessions": redis_url}
    with workers(2, options=options) as ports, haproxy(ports, tmp_path) as url:
        async with (
            httpx.AsyncClient(event_hooks={"request": [record]}) as http,
            StreamableHTTPTransport(url, client=http) as transport,
            Client(transport, protocol_version=HANDSHAKE, timeout=20) as client,
        ):
            stop = anyio.Event()

            async def caller(k: int) -> None:
                nonlocal answered
                i = 0
                while not stop.is_set():
                    i += 1
                    try:
                        result = await client.call("add", {"a": k, "b": i})
                    except Exception as exc:
                        failures.append(f"{type(exc).__name__}: {exc}")
                        continue
                    assert json_value(result.structured_content) == {"result": k + i}, result
                    answered += 1

            with anyio.fail_after(60):
                async with anyio.create_task_group() as tg, httpx.AsyncClient() as other:
                    for k in range(CALLERS):
                        tg.start_soon(caller, k)
                    for _ in range(ROUNDS):
                        await anyio.sleep(0.3)
                        sessions.append(transport.session_id)
                        headers = {
                            "mcp-session-id": str(transport.session_id),
                            "mcp-protocol-version": HANDSHAKE,
                        }
                        assert (await other.delete(url, headers=headers)).status_code == 200
                    await anyio.sleep(0.3)
                    stop.set()
            sessions.append(transport.session_id)
    # A call in flight on the session as it is deleted loses its answer (the session's end
    # ends its streams; basic/transports.mdx, Session Management): an error the caller sees,
    # and not retried (the server may have acted on it). Nothing else may fail.
    lost = "the server ended the stream without a response"
    assert [failure for failure in failures if lost not in failure] == [], failures[:5]
    assert answered > CALLERS * ROUNDS
    assert len(set(sessions)) == ROUNDS + 1 and None not in sessions  # a new one each time
    sessionless = {method for method, session in sent if session is None}
    assert sessionless == {"initialize"}, [m for m, s in sent if s is None]
