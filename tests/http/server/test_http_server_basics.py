"""Streamable HTTP server basics against a real uvicorn server on 127.0.0.1.

Spec: 2025-11-25 basic/transports.mdx §Streamable HTTP (and 2025-03-26 for batches).
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx2
import pytest

from ._support import LiveServer, headers, init_body, messages, sse_events
from .conftest import open_session

pytestmark = pytest.mark.anyio

SESSION_ID = re.compile(r"^[\x21-\x7e]+$")


def call(
    client: httpx2.Client, url: str, sid: str, rid: int, method: str, params: dict[str, Any]
) -> list[dict[str, Any]]:
    r = client.post(
        url,
        json={"jsonrpc": "2.0", "id": rid, "method": method, "params": params},
        headers=headers(sid),
    )
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    return messages(list(sse_events(iter(r.text.splitlines()))))


def test_initialize_assigns_visible_ascii_session_id(
    client: httpx2.Client, live: LiveServer
) -> None:
    """§Session Management 1: the id comes with the InitializeResult, visible ASCII only;
    §Sending Messages 5/6: the response is an SSE stream primed with an id + empty data."""
    r = client.post(live.url, json=init_body(), headers=headers(version=None))
    assert r.status_code == 200
    sid = r.headers["mcp-session-id"]
    assert SESSION_ID.match(sid) and len(sid) >= 32
    events = list(sse_events(iter(r.text.splitlines())))
    assert events[0]["data"] == "" and events[0]["id"] and events[0]["retry"] == "1000"
    (result,) = messages(events)
    assert result["id"] == 1 and result["result"]["protocolVersion"] == "2025-11-25"
    assert sid in live.app.sessions


def test_notification_and_response_get_202(
    client: httpx2.Client, live: LiveServer, session: str
) -> None:
    """§Sending Messages 4: a notification or a response is answered 202 with no body."""
    r = client.post(
        live.url,
        json={"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        headers=headers(session),
    )
    assert (r.status_code, r.content) == (202, b"")
    r = client.post(
        live.url, json={"jsonrpc": "2.0", "id": 999, "result": {}}, headers=headers(session)
    )
    assert (r.status_code, r.content) == (202, b"")


def test_tools_call_answers_on_the_post_stream(
    client: httpx2.Client, live: LiveServer, session: str
) -> None:
    """§Sending Messages 6: the SSE stream carries the response to the POSTed request."""
    (resp,) = call(
        client, live.url, session, 7, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}
    )
    assert resp["id"] == 7 and resp["result"]["content"] == [{"type": "text", "text": "hi"}]


def test_wrong_method_is_405_with_allow(client: httpx2.Client, live: LiveServer) -> None:
    """§Streamable HTTP: the endpoint supports POST and GET (and DELETE); others get 405 and
    an Allow header."""
    for method in ("PUT", "PATCH", "HEAD", "OPTIONS"):
        r = client.request(method, live.url, headers=headers())
        assert r.status_code == 405, method
        assert r.headers["allow"] == "GET, POST, DELETE"


def test_content_type_and_accept_checks(client: httpx2.Client, live: LiveServer) -> None:
    """§Sending Messages 1-2: POST bodies are JSON (415 otherwise); the client MUST accept
    both application/json and text/event-stream (406 otherwise), GET text/event-stream."""
    body = json.dumps(init_body())
    r = client.post(
        live.url, content=body, headers=headers(version=None, **{"content-type": "text/plain"})
    )
    assert r.status_code == 415
    r = client.post(
        live.url, content=body, headers=headers(version=None, accept="application/json")
    )
    assert r.status_code == 406
    r = client.post(
        live.url, content=body, headers=headers(version=None, accept="text/event-stream")
    )
    assert r.status_code == 406
    r = client.get(live.url, headers={"accept": "application/json"})
    assert r.status_code == 406
    assert live.app.sessions == {} or all(s.version for s in live.app.sessions.values())


def test_protocol_version_header(client: httpx2.Client, live: LiveServer, session: str) -> None:
    """§Protocol Version Header: an unsupported MCP-Protocol-Version is 400 on POST, GET and
    DELETE; an absent one is assumed to be 2025-03-26 (a supported version) and served."""
    r = client.post(
        live.url,
        json={"jsonrpc": "2.0", "id": 3, "method": "ping"},
        headers=headers(session, version="1999-01-01"),
    )
    assert r.status_code == 400 and "MCP-Protocol-Version" in r.json()["error"]["message"]
    r = client.post(
        live.url,
        json={"jsonrpc": "2.0", "id": 4, "method": "ping"},
        headers=headers(session, version=None),
    )
    assert r.status_code == 200
    assert messages(list(sse_events(iter(r.text.splitlines())))) == [
        {"jsonrpc": "2.0", "id": 4, "result": {}}
    ]
    bad = {"accept": "text/event-stream", "mcp-session-id": session}
    for method in ("GET", "DELETE"):
        r = client.request(method, live.url, headers={**bad, "mcp-protocol-version": "2.0"})
        assert r.status_code == 400, method
        assert "MCP-Protocol-Version" in r.json()["error"]["message"]
    assert session in live.app.sessions  # the refused DELETE ended nothing
    with client.stream("GET", live.url, headers=bad) as stream:  # no header: served
        assert stream.status_code == 200


def test_session_id_required_unknown_and_deleted(client: httpx2.Client, live: LiveServer) -> None:
    """§Session Management 2-3, 5: 400 without the id, 404 for an unknown one, DELETE ends the
    session and its id then gets 404."""
    sid = open_session(client, live.url)
    ping = {"jsonrpc": "2.0", "id": 5, "method": "ping"}
    assert client.post(live.url, json=ping, headers=headers()).status_code == 400
    assert client.post(live.url, json=ping, headers=headers("no-such-session")).status_code == 404
    assert client.delete(live.url, headers=headers(sid)).status_code == 200
    assert sid not in live.app.sessions
    r = client.post(live.url, json=ping, headers=headers(sid))
    assert r.status_code == 404 and r.json()["error"]["code"] == -32001
    assert client.delete(live.url, headers=headers(sid)).status_code == 404


def test_initialize_with_a_session_header_is_refused(
    client: httpx2.Client, live: LiveServer, session: str
) -> None:
    """§Session Management 4: a new session starts with an initialize *without* a session id."""
    before = len(live.app.sessions)
    r = client.post(live.url, json=init_body(), headers=headers(session))
    assert r.status_code == 400
    assert len(live.app.sessions) == before


def test_malformed_bodies_are_400(client: httpx2.Client, live: LiveServer, session: str) -> None:
    """§Sending Messages 3-4: the body must be a JSON-RPC message; otherwise an HTTP error
    with a JSON-RPC error body without id."""
    r = client.post(live.url, content=b"{not json", headers=headers(session))
    assert r.status_code == 400 and r.json()["error"]["code"] == -32700 and r.json()["id"] is None
    r = client.post(live.url, json={"jsonrpc": "2.0"}, headers=headers(session))
    assert r.status_code == 400 and r.json()["error"]["code"] == -32600
    r = client.post(
        live.url, json={"jsonrpc": "1.0", "id": 1, "method": "ping"}, headers=headers(session)
    )
    assert r.status_code == 400


def test_get_stream_one_per_session_and_carries_server_messages(live: LiveServer) -> None:
    """§Listening for Messages from the Server: the GET stream carries server-initiated
    messages (a list_changed notification here); §Multiple Connections: a second GET of the
    same session is refused (409)."""
    with httpx2.Client(timeout=10) as client:
        sid = open_session(client, live.url)
        get_headers = {
            "accept": "text/event-stream",
            "mcp-session-id": sid,
            "mcp-protocol-version": "2025-11-25",
        }
        with client.stream("GET", live.url, headers=get_headers) as stream:
            assert stream.status_code == 200
            assert client.get(live.url, headers=get_headers).status_code == 409

            def added() -> str:
                return "x"

            # Register on the server's loop thread, as an application would.
            loop = live.app.sessions[sid].task.get_loop()  # type: ignore[union-attr]
            loop.call_soon_threadsafe(live.app.server.tool(description="added later"), added)
            try:
                lines = stream.iter_lines()
                for event in sse_events(lines):
                    if event.get("data"):
                        assert json.loads(event["data"]) == {
                            "jsonrpc": "2.0",
                            "method": "notifications/tools/list_changed",
                        }
                        assert event["id"]
                        break
            finally:
                loop.call_soon_threadsafe(live.app.server.remove_tool, "added")


def test_batch_on_2025_03_26_and_refused_later(client: httpx2.Client, live: LiveServer) -> None:
    """2025-03-26 §Sending Messages 3/5: a batch of requests gets one response per request on
    one stream; batches are gone from 2025-06-18 on (400)."""
    old = open_session(client, live.url, "2025-03-26")
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "b"}},
        },
    ]
    r = client.post(live.url, json=batch, headers=headers(old, "2025-03-26"))
    assert r.status_code == 200
    got = {m["id"]: m for m in messages(list(sse_events(iter(r.text.splitlines()))))}
    assert got[1]["result"] == {} and got[2]["result"]["content"][0]["text"] == "b"
    new = open_session(client, live.url)
    r = client.post(live.url, json=batch, headers=headers(new))
    assert r.status_code == 400 and "batch" in r.json()["error"]["message"]


def test_mounted_in_starlette_on_a_real_server() -> None:
    """§Streamable HTTP ("a single HTTP endpoint path"): the app is plain ASGI, so it mounts
    at any path of a Starlette application; the host app's lifespan closes its sessions."""
    import contextlib
    from collections.abc import AsyncIterator

    from starlette.applications import Starlette
    from starlette.routing import Mount

    from mcpbind.http import StreamableHTTPApp

    from ._support import make_server

    mcp_app = StreamableHTTPApp(make_server())

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        yield
        await mcp_app.aclose()

    host = Starlette(routes=[Mount("/api/mcp", app=mcp_app)], lifespan=lifespan)
    server = LiveServer(mcp_app)
    server.server.config.app = host
    server.start()
    url = f"http://127.0.0.1:{server.port}/api/mcp/"
    try:
        with httpx2.Client(timeout=10) as client:
            sid = open_session(client, url)
            events = call(client, url, sid, 2, "resources/read", {"uri": "test://hello"})
            assert events[0]["result"]["contents"][0]["text"] == "hello resource"
            assert sid in mcp_app.sessions
    finally:
        server.stop()
    assert mcp_app.sessions == {}


def test_serve_http_runs_uvicorn_on_loopback() -> None:
    """``serve_http`` (a separate process, stopped by its PID): binds 127.0.0.1 at the given
    path, serves the MCP endpoint there and 404 elsewhere, refuses a hostile Host, and on
    SIGTERM ends its open SSE streams and exits promptly.

    Spec: 2025-11-25 basic/transports.mdx §Security Warning 2 (bind to localhost).
    """
    import os
    import signal
    import sys
    import time

    from support.live_server import free_port, listening_process

    port = free_port()
    code = (
        "from mcpbind import Server\n"
        "from mcpbind.http import serve_http\n"
        "s = Server('serve-http-test')\n"
        "@s.tool()\n"
        "def ping_tool() -> str:\n"
        "    return 'pong'\n"
        f"serve_http(s, port={port}, path='/rpc')\n"
    )
    url = f"http://127.0.0.1:{port}/rpc"
    args = [sys.executable, "-c", code]
    with listening_process(args, port) as proc, httpx2.Client(timeout=5) as client:
        r = client.post(url, json=init_body(), headers=headers(version=None))
        assert r.status_code == 200 and r.headers["mcp-session-id"]
        other = f"http://127.0.0.1:{port}/elsewhere"
        assert client.post(other, json=init_body(), headers=headers()).status_code == 404
        hostile = headers(version=None, host="evil.example.com")
        assert client.post(url, json=init_body(), headers=hostile).status_code == 421
        # SIGTERM with a GET stream open: the stream ends cleanly and the process exits
        # at once (uvicorn alone waits for open requests, so forever for an SSE stream).
        sid = r.headers["mcp-session-id"]
        get = {"accept": "text/event-stream", "mcp-session-id": sid}
        with client.stream("GET", url, headers=get) as stream:
            assert stream.status_code == 200
            stopped = time.monotonic()
            os.kill(proc.pid, signal.SIGTERM)
            assert list(stream.iter_lines()) == []  # ended, not broken
            assert proc.wait(10) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal
            assert time.monotonic() - stopped < 10  # not forever: a loaded-machine margin


async def test_stateless_era_seam() -> None:
    """2026-07-28 seam: a POST whose request ``_meta`` names a protocol version is classified
    before any session lookup and handed to the app's ``per_request``; no session is created
    or required.

    Spec: 2026-07-28 basic/transports/streamable-http.mdx §Request Metadata.
    """
    from mcpbind.http import StreamableHTTPApp
    from mcpbind.protocol.classify import Classified, classify_body

    from ._raw import asgi_call
    from ._support import make_server

    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
        }
    ).encode()
    classified = classify_body(body)
    assert (classified.era, classified.meta_version) == ("stateless", "2026-07-28")
    assert classify_body(json.dumps(init_body()).encode()).era == "handshake"
    hdrs = [
        ("host", "127.0.0.1:8000"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
    ]
    app = StreamableHTTPApp(make_server())
    status, _, out = await asgi_call(app, "POST", hdrs, [body])
    # Served by the stateless era (mcpbind.http.server.per_request; its rules are tested there),
    # never by the session path: no session is created, none is asked for.
    assert status != 404 and b"Mcp-Session-Id" not in out and app.sessions == {}

    seen: list[Classified] = []

    class Recorder:
        async def serve(
            self, scope: Any, receive: Any, send: Any, headers: Any, classified: Classified
        ) -> None:
            seen.append(classified)
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"{}"})

    class Era2026(StreamableHTTPApp):
        @property
        def per_request(self) -> Any:
            return Recorder()

    app = Era2026(make_server())
    status, _, _ = await asgi_call(app, "POST", hdrs, [body])
    assert status == 200 and seen[0].request_ids == [1] and app.sessions == {}


def test_a_post_body_is_decoded_once() -> None:
    """The session's core reads the envelope the classifier decoded (``Decoded``) instead of
    decoding the POST body again: shown with bytes that no longer match their envelope."""
    from mcpbind.protocol import RequestReceived, Session
    from mcpbind.protocol.classify import classify_body, decoded_body

    body = json.dumps(init_body()).encode()
    classified = classify_body(body)
    handed = decoded_body(body, classified)
    assert handed == body
    stale = type(handed)(b"not json at all")
    stale.envelope = handed.envelope  # type: ignore[attr-defined]
    core = Session("server")
    (event,) = core.receive(stale)
    assert isinstance(event, RequestReceived)
    assert (event.id, event.method) == (1, "initialize")
    batch = b"[" + body + b"]"
    assert decoded_body(batch, classify_body(batch)) is batch  # a batch goes as it is
