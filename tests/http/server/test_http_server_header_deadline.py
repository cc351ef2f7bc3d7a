"""serve_http's request-header deadline (slowloris protection) on both uvicorn HTTP parsers,
and how serve_http picks the parser and event loop (httptools + uvloop when installed).

Spec: none on slow clients (2025-11-25 basic/transports.mdx §Security Warning asks servers to
be safe to expose); issue 4 §Server "Safe by default" (read deadlines).
"""

from __future__ import annotations

import importlib.util
import json
import re
import select
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
import uvicorn

import mcpbind.http.server.serve as serve
from mcpbind.http import StreamableHTTPApp, serve_http

from ._raw import post_head
from ._support import LiveServer, headers, init_body, make_server

HAS_HTTPTOOLS = importlib.util.find_spec("httptools") is not None
PARSERS = [
    "h11",
    pytest.param(
        "httptools",
        marks=pytest.mark.skipif(
            not HAS_HTTPTOOLS, reason="httptools is not installed (pip install 'mcpbind[http]')"
        ),
    ),
]
DEADLINE = 0.5
INIT = json.dumps(init_body()).encode()


@pytest.fixture(scope="module", params=PARSERS)
def live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    app = StreamableHTTPApp(make_server(), path="/mcp")
    server = LiveServer(app, header_timeout=DEADLINE, http=request.param).start()
    try:
        yield server
    finally:
        server.stop()


def _complete_405(s: socket.socket, port: int) -> None:
    """One complete request (PUT: 405) on ``s``; the connection stays open."""
    s.sendall(b"PUT /mcp HTTP/1.1\r\nhost: 127.0.0.1:%d\r\n\r\n" % port)
    answer = b""
    while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
        chunk = s.recv(4096)
        assert chunk, answer
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 405")


def test_unfinished_headers_are_cut_off(live: LiveServer) -> None:
    """A connection that never finishes its request headers is closed, without an answer,
    once the deadline has passed."""
    with socket.create_connection(("127.0.0.1", live.port), timeout=5) as s:
        s.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        started = time.monotonic()
        assert s.recv(1024) == b""
        assert DEADLINE * 0.8 < time.monotonic() - started < 3


@pytest.mark.parametrize("second", [False, True], ids=["first-request", "keep-alive"])
def test_headers_sent_byte_by_byte_are_cut_off(live: LiveServer, second: bool) -> None:
    """Slowloris: headers sent one byte every 20 ms keep the connection busy, but the deadline
    covers the whole header block and new bytes do not extend it; the same holds for the next
    request on a kept-alive connection. Nothing is allocated for the cut request."""
    before = set(live.app.sessions)
    head = post_head(live.port, length=len(INIT)) + b"\r\nx-padding: " + b"p" * 200
    with socket.create_connection(("127.0.0.1", live.port), timeout=5) as s:
        if second:
            _complete_405(s, live.port)
        started = time.monotonic()
        closed_at = None
        for byte in head:
            try:
                s.sendall(bytes([byte]))
            except OSError:  # the server closed (reset) the connection
                closed_at = time.monotonic()
                break
            ready, _, _ = select.select([s], [], [], 0.02)
            if ready:
                try:
                    data = s.recv(1024)
                except OSError:
                    data = b""
                assert data == b"", data  # closed without an answer
                closed_at = time.monotonic()
                break
    assert closed_at is not None, "the server let a byte-by-byte header block run on"
    assert DEADLINE * 0.8 < closed_at - started < 2.0, closed_at - started
    assert set(live.app.sessions) == before


@pytest.mark.parametrize("http", PARSERS)
def test_oversized_unfinished_headers_are_refused_at_once(http: str) -> None:
    """Issue 28 F19: httptools buffered an unfinished header of 16 MiB until the deadline (40
    connections: 33 MB -> 740 MB). Past the cap (64 KiB by default; h11's own, 16 KiB, in
    this LiveServer) the request is refused at once -- 431 (httptools) or 400 (h11) -- and
    the connection closed, long before the header deadline."""
    app = StreamableHTTPApp(make_server(), path="/mcp")
    server = LiveServer(app, header_timeout=60.0, http=http).start()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=20) as s:
            s.sendall(post_head(server.port) + b"\r\nx-padding: ")
            sent = 0
            try:
                while sent < 4 * 1024 * 1024:  # an unfinished header, 4 MiB long at most
                    s.sendall(b"p" * 65536)
                    sent += 65536
            except OSError:  # the server closed (reset) the connection
                pass
            answer = b""
            try:
                while chunk := s.recv(65536):
                    answer += chunk
            except OSError:
                pass
        assert answer.startswith(b"HTTP/1.1 431 " if http == "httptools" else b"HTTP/1.1 400 "), (
            answer[:200]
        )
    finally:
        server.stop()


def test_prompt_requests_on_a_kept_alive_connection_are_not_cut(live: LiveServer) -> None:
    """Each request gets its own deadline: prompt requests with pauses shorter than the
    deadline keep a connection open for longer than the deadline in all."""
    with socket.create_connection(("127.0.0.1", live.port), timeout=5) as s:
        started = time.monotonic()
        for _ in range(4):
            _complete_405(s, live.port)
            time.sleep(DEADLINE * 0.6)
        _complete_405(s, live.port)
        assert time.monotonic() - started > DEADLINE * 2


def _open_session(url: str) -> str:
    with httpx2.Client(timeout=5) as c:
        r = c.post(url, json=init_body(), headers=headers(version=None))
        assert r.status_code == 200, r.text
        sid = r.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert c.post(url, json=note, headers=headers(sid)).status_code == 202
    return str(sid)


@pytest.mark.parametrize("pipelined", [False, True], ids=["alone", "pipelined"])
def test_deadline_does_not_cut_a_slow_response(live: LiveServer, pipelined: bool) -> None:
    """The deadline stops when the headers are complete: a request answered after longer than
    the deadline is not cut, alone or pipelined behind another request on the connection."""
    sid = _open_session(live.url)
    call: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "slow", "arguments": {"seconds": DEADLINE * 2}},
    }
    body = json.dumps(call).encode()
    slow = (
        post_head(
            live.port, length=len(body), mcp_session_id=sid, mcp_protocol_version="2025-11-25"
        )
        + b"\r\nconnection: close\r\n\r\n"
        + body
    )
    put = b"PUT /mcp HTTP/1.1\r\nhost: 127.0.0.1:%d\r\n\r\n" % live.port
    data = b""
    with socket.create_connection(("127.0.0.1", live.port), timeout=5) as s:
        s.sendall(put + slow if pipelined else slow)
        while chunk := s.recv(65536):
            data += chunk
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", data)
    assert statuses == ([b"405", b"200"] if pipelined else [b"200"]), data
    assert f"slept {DEADLINE * 2}".encode() in data


def test_choose_stack_prefers_httptools_and_uvloop_when_installed() -> None:
    """``auto`` runs the fast stack when it is installed, else h11 / asyncio."""
    has_uvloop = importlib.util.find_spec("uvloop") is not None
    http, loop = serve.choose_stack()
    assert http == ("httptools" if HAS_HTTPTOOLS else "h11")
    assert loop == ("uvloop" if has_uvloop else "asyncio")
    assert serve.choose_stack("h11", "asyncio") == ("h11", "asyncio")


def test_choose_stack_falls_back_and_rejects(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without httptools / uvloop, ``auto`` falls back; forcing a missing one, or naming an
    unknown one, is a clear error before anything is served."""
    monkeypatch.setattr(serve, "_installed", lambda module: False)
    assert serve.choose_stack() == ("h11", "asyncio")
    with pytest.raises(ImportError, match="needs httptools"):
        serve.choose_stack(http="httptools")
    with pytest.raises(ImportError, match="needs uvloop"):
        serve.choose_stack(loop="uvloop")
    with pytest.raises(ValueError, match="http must be"):
        serve.choose_stack(http="h2")
    with pytest.raises(ValueError, match="loop must be"):
        serve.choose_stack(loop="trio")
    with pytest.raises(ValueError, match="http must be"):
        serve.header_deadline_protocol(1.0, "auto")
    with pytest.raises(ValueError, match="header_timeout"):
        serve.header_deadline_protocol(0.0)


@pytest.mark.parametrize("http", ["auto", "h11"])
def test_serve_http_hands_uvicorn_the_deadline_protocol(
    monkeypatch: pytest.MonkeyPatch, http: Any
) -> None:
    """serve_http gives uvicorn the chosen parser's deadline subclass and the chosen loop
    (uvicorn's run is replaced: only the configuration is looked at)."""
    seen: list[uvicorn.Config] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: seen.append(self.config))
    serve_http(make_server(), port=0, http=http, header_timeout=3.0)
    (config,) = seen
    parser, loop = serve.choose_stack(http)
    base: type[Any]
    if parser == "httptools":
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        base = HttpToolsProtocol
    else:
        from uvicorn.protocols.http.h11_impl import H11Protocol

        base = H11Protocol
    protocol: Any = config.http
    assert protocol.header_timeout == 3.0
    assert protocol.max_header_size == 64 * 1024  # both parsers: the same cap
    assert config.h11_max_incomplete_event_size == 64 * 1024
    assert isinstance(protocol, type) and issubclass(protocol, base)
    assert config.loop == loop
    assert config.access_log is False  # log_level "warning" would drop every access line


def test_serve_http_keeps_the_access_log_when_it_is_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    """The access log stays on when the log level shows its INFO lines."""
    seen: list[uvicorn.Config] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: seen.append(self.config))
    serve_http(make_server(), port=0, log_level="info")
    serve_http(make_server(), port=0, uvicorn_options={"access_log": True})
    assert [config.access_log for config in seen] == [True, True]
