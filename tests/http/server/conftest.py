"""Fixtures: a live uvicorn server per test module, an HTTP client, an initialized session."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest

from mcpbind.http import InMemoryEventStore, StreamableHTTPApp

from ._support import LiveServer, headers, init_body, make_server


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    app = StreamableHTTPApp(make_server(), event_store=InMemoryEventStore(), path="/mcp")
    server = LiveServer(app).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def client() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=10) as c:
        yield c


def open_session(client: httpx2.Client, url: str, version: str = "2025-11-25") -> str:
    """Initialize, send ``notifications/initialized``, return the session id."""
    r = client.post(url, json=init_body(version), headers=headers(version=None))
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    r2 = client.post(
        url,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers=headers(sid, version),
    )
    assert r2.status_code == 202
    return sid


@pytest.fixture
def session(client: httpx2.Client, live: LiveServer) -> str:
    return open_session(client, live.url)
