"""Issue 16 over Streamable HTTP: hostile bodies and headers against a live uvicorn server.

2025-11-25 basic/transports.mdx §Streamable HTTP (Sending Messages to the Server: a request's
response comes on its POST; Protocol Version Header: an invalid version is a 400; Security
Warning: validate Host), basic/index.mdx §Messages, RFC 9110 §12.4.2 (``q=0``).
"""

from __future__ import annotations

import gc
import tracemalloc

import httpx2
import pytest

from ._support import LiveServer, headers
from .conftest import open_session

INVALID_REQUEST = -32600


def alternating(levels: int) -> bytes:
    opened = b"".join(b"[" if i % 2 == 0 else b'{"":' for i in range(levels))
    closed = b"".join(b"]" if i % 2 == 0 else b"}" for i in reversed(range(levels)))
    return opened + b"0" + closed


def deep_call(rid: int, levels: int) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",' % rid
        + b'"arguments":{"text":"x","extra":'
        + alternating(levels)
        + b"}}}"
    )


@pytest.mark.parametrize("levels", [129, 144, 500, 995, 1000, 20_000])
def test_deep_body_is_answered_on_its_post(
    client: httpx2.Client, live: LiveServer, session: str, levels: int
) -> None:
    """Issue 16 (2): 129-995 levels used to be refused on the GET stream with ``id: null``,
    leaving the POST hanging and its id in use; >= ~1,000 gave a 500. Now the POST itself
    gets 400 with -32600, and the id is free for the next request."""
    r = client.post(live.url, content=deep_call(7, levels), headers=headers(session), timeout=5)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == INVALID_REQUEST
    assert "nesting exceeds 128 levels" in r.json()["error"]["message"]
    ok = client.post(
        live.url,
        json={
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "after"}},
        },
        headers=headers(session),
    )
    assert ok.status_code == 200 and '"after"' in ok.text


def test_deep_stateless_body_is_refused(client: httpx2.Client, live: LiveServer) -> None:
    """Issue 16 (2): the 2026-07-28 path has the same bound."""
    body = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":'
        b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28","x":' + alternating(600) + b"}}}"
    )
    h = headers(version="2026-07-28", **{"mcp-method": "tools/list"})
    r = client.post(live.url, content=body, headers=h, timeout=5)
    assert r.status_code == 400 and r.json()["error"]["code"] == INVALID_REQUEST


def test_deep_bodies_pin_no_session_and_no_memory(client: httpx2.Client, live: LiveServer) -> None:
    """Issue 16 (2): 300 deep POSTs leave session count and traced memory flat."""
    sid = open_session(client, live.url)
    sessions = len(live.app.sessions)
    body = deep_call(1, 600)

    def burst() -> None:
        for _ in range(100):
            r = client.post(live.url, content=body, headers=headers(sid), timeout=5)
            assert r.status_code == 400

    burst()  # warm caches
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        burst()
        burst()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(live.app.sessions) == sessions
    assert grown < 512 * 1024, f"{grown} bytes kept after 200 deep POSTs"


@pytest.mark.parametrize(
    "accept",
    [
        "application/json;q=0, text/event-stream;q=0",
        "application/json;q=0, text/event-stream",
        "application/json, text/event-stream;q=0.0",
    ],
)
def test_accept_with_q_zero_is_not_acceptable(
    client: httpx2.Client, live: LiveServer, accept: str
) -> None:
    """Issue 16 (10): RFC 9110 §12.4.2, ``q=0`` means "not acceptable"."""
    h = headers(version=None)
    h["accept"] = accept
    r = client.post(live.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=h)
    assert r.status_code == 406


def test_host_with_an_impossible_port_is_refused(client: httpx2.Client, live: LiveServer) -> None:
    """Issue 16 (10): ``localhost:99999`` is no valid Host (ports end at 65535)."""
    for host in ("localhost:99999", "localhost:65536", "127.0.0.1:00000x"):
        r = client.post(
            live.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={**headers(version=None), "host": host},
        )
        assert r.status_code == 421, host
    ok = client.post(
        live.url,
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={**headers(version=None), "host": "localhost:65535"},
    )
    assert ok.status_code != 421


def test_protocol_version_header_must_match_the_negotiated_one(
    client: httpx2.Client, live: LiveServer
) -> None:
    """Issue 16 (10): a supported version that is not the session's is a 400."""
    sid = open_session(client, live.url, "2025-06-18")
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    r = client.post(live.url, json=ping, headers=headers(sid, "2025-11-25"))
    assert r.status_code == 400 and "negotiated" in r.json()["error"]["message"]
    ok = client.post(live.url, json=ping, headers=headers(sid, "2025-06-18"))
    assert ok.status_code == 200
