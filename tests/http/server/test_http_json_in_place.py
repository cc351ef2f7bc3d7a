"""JSON-mode requests on a session, answered in their POST's own task (no hop through the
session's read loop): every session rule still applies, on a real uvicorn server.

Spec: 2025-11-25 basic/transports.mdx §Sending Messages to the Server (a JSON response per
POST), basic/utilities/cancellation.mdx (``notifications/cancelled`` interrupts the handler),
basic/lifecycle.mdx (requests before the handshake completes); the in-flight bound is
``SessionOptions.max_inflight`` (mcpbind's own limit).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2
import pytest

from mcpbind import Context, Server
from mcpbind.http import StreamableHTTPApp
from mcpbind.protocol import SessionOptions

from ._support import LiveServer, headers, init_body

JSON = "application/json"


class _Probe:
    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.release = threading.Event()  # set by the test: the blocking def tool returns


def _server(probe: _Probe) -> Server:
    server = Server("json-in-place")

    @server.tool(description="Echo the text back")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Wait until cancelled")
    async def hang(ctx: Context) -> str:
        probe.started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            probe.cancelled.set()
            raise
        return "not cancelled"

    @server.tool(description="Block a worker thread until the test releases it")
    def block() -> str:
        probe.started.set()
        return "released" if probe.release.wait(60) else "timed out"

    return server


@pytest.fixture
def probe() -> _Probe:
    return _Probe()


@pytest.fixture
def live(probe: _Probe) -> Iterator[tuple[LiveServer, StreamableHTTPApp]]:
    app = StreamableHTTPApp(
        _server(probe),
        json_response=True,
        path="/mcp",
        session_options=SessionOptions(max_inflight=2),
    )
    server = LiveServer(app).start()
    try:
        yield server, app
    finally:
        server.stop()


def _call(rid: int, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments or {}}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def _cancel(rid: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}


def _session(client: httpx2.Client, url: str) -> str:
    r = client.post(url, json=init_body(), headers=headers(version=None, accept=JSON))
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert client.post(url, json=done, headers=headers(sid, accept=JSON)).status_code == 202
    return sid


def _post(url: str, body: dict[str, Any], sid: str) -> httpx2.Response:
    with httpx2.Client(timeout=15) as c:
        return c.post(url, json=body, headers=headers(sid, accept=JSON))


def test_cancelled_notification_interrupts_a_json_request(
    live: tuple[LiveServer, StreamableHTTPApp], probe: _Probe
) -> None:
    """cancellation.mdx: ``notifications/cancelled`` cancels the handler of a request being
    answered in JSON mode; its POST ends without a response to the request, and the
    session (and the request id) stay usable."""
    server, _ = live
    with httpx2.Client(timeout=15) as client, ThreadPoolExecutor(1) as pool:
        sid = _session(client, server.url)
        pending = pool.submit(_post, server.url, _call(7, "hang"), sid)
        assert probe.started.wait(10)
        assert client.post(server.url, json=_cancel(7), headers=headers(sid)).status_code == 202
        answer = pending.result(15)
        assert probe.cancelled.is_set()
        # No response to the request; 202, not 404: the session is not gone (a 404 tells
        # the client to start a new session, transports.mdx §Session Management).
        assert answer.status_code == 202 and answer.content == b""
        r = client.post(server.url, json=_call(7, "echo", {"text": "again"}), headers=headers(sid))
        assert r.status_code == 200 and r.json()["result"]["content"][0]["text"] == "again"


def test_json_requests_keep_the_session_in_flight_bound(
    live: tuple[LiveServer, StreamableHTTPApp], probe: _Probe
) -> None:
    """``SessionOptions.max_inflight`` (2 here) bounds JSON-mode requests of one session too:
    a third concurrent request is refused at once with "Server busy", and a blocking ``def``
    tool delays no other request of the session."""
    server, _ = live
    with httpx2.Client(timeout=15) as client, ThreadPoolExecutor(2) as pool:
        sid = _session(client, server.url)
        blocked = pool.submit(_post, server.url, _call(1, "block"), sid)
        assert probe.started.wait(10)
        try:
            # The def tool holds a worker thread; the loop still answers the session.
            r = client.post(server.url, json=_call(2, "echo", {"text": "x"}), headers=headers(sid))
            assert r.json()["result"]["content"][0]["text"] == "x"
            probe.started.clear()
            second = pool.submit(_post, server.url, _call(3, "hang"), sid)
            assert probe.started.wait(10)  # "hang" holds the second slot
            third = client.post(
                server.url, json=_call(4, "echo", {"text": "y"}), headers=headers(sid)
            )
            assert "2 requests in flight on this session" in third.json()["error"]["message"]
        finally:
            probe.release.set()
        assert blocked.result(15).json()["result"]["content"][0]["text"] == "released"
        assert client.post(server.url, json=_cancel(3), headers=headers(sid)).status_code == 202
        assert second.result(15).status_code == 202  # cancelled: no response, session lives
        r = client.post(server.url, json=_call(5, "echo", {"text": "z"}), headers=headers(sid))
        assert r.json()["result"]["content"][0]["text"] == "z"  # the slots were freed


def test_json_request_errors_come_from_the_session(
    live: tuple[LiveServer, StreamableHTTPApp],
) -> None:
    """The session's accept step still decides: an unknown method is -32601 and a bad
    ``tools/call`` a tool error, both as the POST's JSON body, each on its own id."""
    server, app = live
    with httpx2.Client(timeout=15) as client:
        sid = _session(client, server.url)
        bad = {"jsonrpc": "2.0", "id": 8, "method": "no/such", "params": {}}
        r = client.post(server.url, json=bad, headers=headers(sid))
        assert r.status_code == 200 and r.json()["id"] == 8
        assert r.json()["error"]["code"] == -32601
        r = client.post(server.url, json=_call(9, "missing"), headers=headers(sid))
        assert r.status_code == 200 and r.json()["id"] == 9
        assert "error" in r.json() or r.json()["result"].get("isError") is True
        assert not app.sessions[sid].busy  # nothing left in flight
