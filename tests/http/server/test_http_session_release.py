"""An ended Streamable HTTP session is freed at once (basic/transports.mdx §Session
Management: the server may terminate a session, the client may DELETE it), by reference
counting alone: the session, its connection and its transport hold one another only while it
runs. A cycle among them would wait for the collector's next full collection, minutes apart on
a busy server, and under session churn the process's memory would follow those collections
(issue 16, the soak's RSS drift)."""

from __future__ import annotations

import asyncio
import gc
import json
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from mcpbind import Server
from mcpbind.http import StreamableHTTPApp

from ._raw import asgi_call
from ._support import init_body

pytestmark = pytest.mark.anyio

HEADERS = [
    ("host", "127.0.0.1:8000"),
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def no_collector() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def echo_server() -> Server:
    server = Server("release")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    return server


async def open_session(app: StreamableHTTPApp) -> list[tuple[str, str]]:
    """initialize, initialized and one tools/call; the headers of the session."""
    status, headers, _ = await asgi_call(
        app, headers=HEADERS, chunks=[json.dumps(init_body("2025-11-25")).encode()]
    )
    assert status == 200
    session = [
        *HEADERS,
        ("mcp-session-id", headers["mcp-session-id"]),
        ("mcp-protocol-version", "2025-11-25"),
    ]
    note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    assert (await asgi_call(app, headers=session, chunks=[note]))[0] == 202
    call = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}'
    status, _, body = await asgi_call(app, headers=session, chunks=[call])
    assert status == 200 and b'"hi"' in body
    return session


async def freed(ref: weakref.ref[Any]) -> bool:
    """Whether ``ref``'s object is freed once the session's last steps ran (the collector is
    off: only reference counting can free it)."""
    for _ in range(200):
        if ref() is None:
            return True
        await asyncio.sleep(0.01)
    return False


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_deleted_session_is_freed_without_the_collector(
    no_collector: None, json_response: bool
) -> None:
    app = StreamableHTTPApp(echo_server(), json_response=json_response)
    headers = await open_session(app)
    (session,) = app.sessions.values()
    ref = weakref.ref(session)
    connection = weakref.ref(session.server_session.connection)
    del session
    status, _, _ = await asgi_call(app, method="DELETE", headers=headers)
    assert status == 200
    assert not app.sessions
    assert await freed(ref) and await freed(connection)


async def test_reaped_and_closed_sessions_are_freed_without_the_collector(
    no_collector: None,
) -> None:
    app = StreamableHTTPApp(echo_server(), idle_timeout=0.05)
    await open_session(app)
    (idle,) = app.sessions.values()
    reaped = weakref.ref(idle)
    del idle
    assert await freed(reaped)
    assert not app.sessions

    await open_session(app)
    (live,) = app.sessions.values()
    closed = weakref.ref(live)
    del live
    await app.aclose()
    assert await freed(closed)
