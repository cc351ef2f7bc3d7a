"""Safe-by-default Streamable HTTP: DNS-rebinding protection, body caps and deadlines, the
session cap, idle sessions, principal binding, and nothing allocated for rejected requests.

Spec: 2025-11-25 basic/transports.mdx §Security Warning and §Session Management.
"""

from __future__ import annotations

import asyncio
import gc
import json
import re
import sys
import time
from collections.abc import Iterator, MutableMapping
from typing import Any

import httpx2
import pytest

from mcpbind.http import StreamableHTTPApp
from mcpbind.http.server.http_session import new_session_id
from mcpbind.http.server.security import HostPolicy

from ._raw import asgi_call, post_head, raw_request
from ._support import LiveServer, headers, init_body, make_server

pytestmark = pytest.mark.anyio

INIT = json.dumps(init_body()).encode()
MIB = 1024 * 1024


class PrincipalFromHeader:
    """A stand-in auth layer: puts the ``x-user`` header in ``scope["mcp.principal"]``."""

    def __init__(self, app: StreamableHTTPApp) -> None:
        self.app = app
        self.server = app.server
        self.sessions = app.sessions

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            for k, v in scope["headers"]:
                if k == b"x-user":
                    scope["mcp.principal"] = v.decode()
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def strict() -> Iterator[LiveServer]:
    app = StreamableHTTPApp(
        make_server(), body_timeout=0.5, max_sessions=3, idle_timeout=0.4, path="/mcp"
    )
    server = LiveServer(app, header_timeout=0.5)
    server.server.config.app = PrincipalFromHeader(app)
    server.server.config.loaded = False
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _clean(strict: LiveServer) -> Iterator[None]:
    yield
    for sid in list(strict.app.sessions):
        with httpx2.Client() as c:
            c.delete(strict.url, headers=headers(sid, **{"x-user": "alice"}))
            c.delete(strict.url, headers=headers(sid))


HOSTILE_HOSTS = [
    "evil.example.com",
    "localhost.evil.com",
    "localhost:8000.evil.com",
    "evil.example.com:{port}",
    "127.0.0.1.evil.com",
]
HOSTILE_ORIGINS = [
    "http://evil.example.com",
    "http://localhost.evil.com",
    "http://localhost:8000.evil.com",
    "null",
    "file://",
    "http://evil.example.com:{port}",
]
GOOD = ["localhost:{port}", "127.0.0.1:{port}", "[::1]:{port}", "localhost", "LOCALHOST:{port}"]


@pytest.mark.parametrize("host", HOSTILE_HOSTS)
def test_hostile_host_rejected(strict: LiveServer, host: str) -> None:
    """§Security Warning 1 (DNS rebinding): a non-loopback Host is refused (421) and no
    session is created."""
    status, _ = raw_request(
        strict.port,
        post_head(strict.port, host=host.format(port=strict.port), length=len(INIT)),
        INIT,
    )
    assert status == 421
    assert strict.app.sessions == {}


@pytest.mark.parametrize("origin", HOSTILE_ORIGINS)
def test_hostile_origin_rejected(strict: LiveServer, origin: str) -> None:
    """§Security Warning 1: an invalid Origin MUST get 403 Forbidden (``Origin: null`` too)."""
    status, data = raw_request(
        strict.port,
        post_head(strict.port, origin=origin.format(port=strict.port), length=len(INIT)),
        INIT,
    )
    assert status == 403
    assert b'"id":null' in data
    assert strict.app.sessions == {}


@pytest.mark.parametrize("host", GOOD)
def test_loopback_names_accepted(strict: LiveServer, host: str) -> None:
    """§Security Warning: localhost, 127.0.0.1 and [::1], with a port, as Host and as Origin."""
    host = host.format(port=strict.port)
    status, data = raw_request(
        strict.port,
        post_head(strict.port, host=host, origin=f"http://{host}", length=len(INIT)),
        INIT,
    )
    assert status == 200, data
    assert b"mcp-session-id" in data.lower()


def test_policy_off_loopback_is_same_origin() -> None:
    """§Security Warning: off loopback (no lists given) any Host passes but an Origin must be
    the Host's own; explicit lists are exact."""
    policy = HostPolicy(None, None)
    assert policy.host_ok("api.example.com", loopback=False)
    assert policy.origin_ok("https://api.example.com", "api.example.com", loopback=False)
    assert not policy.origin_ok("https://evil.example.com", "api.example.com", loopback=False)
    assert not policy.origin_ok("null", "api.example.com", loopback=False)
    listed = HostPolicy(["api.example.com"], ["https://app.example.com"])
    assert listed.host_ok("api.example.com:8443", loopback=True)
    assert not listed.host_ok("localhost", loopback=True)
    assert listed.origin_ok("https://app.example.com", None, loopback=False)
    assert not listed.origin_ok("https://app.example.com.evil.com", None, loopback=False)


def test_declared_5mib_body_is_413_before_reading(strict: LiveServer) -> None:
    """Body cap (4 MiB default): a declared 5 MiB body is refused from Content-Length alone,
    with no body sent and no session created.

    Spec: 2025-11-25 basic/transports.mdx §Security Warning; RFC 9110 §15.5.14 (413).
    """
    status, _ = raw_request(strict.port, post_head(strict.port, length=5 * MIB))
    assert status == 413
    assert strict.app.sessions == {}


def test_5mib_chunked_body_is_413() -> None:
    """Body cap: a body without Content-Length (chunked, 4 KiB pieces) is refused once it
    passes the cap, and no session is created. On a server with the default body deadline:
    the strict server's 0.5 s could pass before 4 MiB arrive on a loaded machine (408).

    Spec: 2025-11-25 basic/transports.mdx §Security Warning; RFC 9110 §15.5.14 (413).
    """
    piece = b"x" * 4096
    chunks = (
        b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for _ in range(5 * MIB // 4096))
        + b"0\r\n\r\n"
    )
    server = LiveServer(StreamableHTTPApp(make_server(), path="/mcp")).start()
    try:
        status, _ = raw_request(
            server.port, post_head(server.port, transfer_encoding="chunked"), chunks
        )
        assert status == 413
        assert server.app.sessions == {}
    finally:
        server.stop()


async def test_5mib_trickled_in_1_byte_chunks_is_413() -> None:
    """Body cap: 5 MiB delivered to the app in 1-byte ASGI chunks gets 413 as soon as the
    cap is passed (the rest is never read), and no session exists.

    Spec: 2025-11-25 basic/transports.mdx §Security Warning; RFC 9110 §15.5.14 (413).
    """
    app = StreamableHTTPApp(make_server())
    one_byte = {"type": "http.request", "body": b"x", "more_body": True}
    last = {"type": "http.request", "body": b"x", "more_body": False}
    total = 5 * MIB
    received = 0
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> MutableMapping[str, Any]:
        nonlocal received
        received += 1
        return one_byte if received < total else last

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "server": ("127.0.0.1", 8000),
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
        ],
    }
    await app(scope, receive, send)
    assert sent[0]["status"] == 413 and b"exceeds" in sent[1]["body"]
    assert received == 4 * MIB + 1  # stopped reading right after the cap
    assert app.sessions == {}


def test_body_trickled_in_1_byte_chunks_on_a_real_server() -> None:
    """Body cap through uvicorn: a chunked body sent as 1-byte HTTP chunks is counted as it
    arrives and refused (413) once past the cap (16 KiB here: uvicorn parses 1-byte chunks
    at ~30 us each, so 5 MiB of them is the in-process test above); no session is created.

    Spec: 2025-11-25 basic/transports.mdx §Security Warning; RFC 9110 §15.5.14 (413).
    """
    server = LiveServer(StreamableHTTPApp(make_server(), max_body_size=16 * 1024, path="/mcp"))
    server.start()
    try:
        body = b"1\r\nx\r\n" * (20 * 1024) + b"0\r\n\r\n"
        status, _ = raw_request(
            server.port, post_head(server.port, transfer_encoding="chunked"), body
        )
        assert status == 413
        assert server.app.sessions == {}
    finally:
        server.stop()


def test_slow_body_gets_408(strict: LiveServer) -> None:
    """Body read deadline: a client that stops sending its body mid-way gets 408.

    Spec: 2025-11-25 basic/transports.mdx §Security Warning; RFC 9110 §15.5.9 (408).
    """
    started = time.monotonic()
    status, _ = raw_request(strict.port, post_head(strict.port, length=len(INIT)), INIT[:10])
    assert status == 408
    assert time.monotonic() - started < 3
    assert strict.app.sessions == {}


def test_body_that_never_starts_gets_408(strict: LiveServer) -> None:
    """Body read deadline: complete headers announcing a body, then not one body byte (the
    ASGI server waits for body bytes without a deadline) still gets 408 in time.

    Spec: 2025-11-25 basic/transports.mdx §Security Warning; RFC 9110 §15.5.9 (408).
    """
    started = time.monotonic()
    status, _ = raw_request(strict.port, post_head(strict.port, length=len(INIT)))
    assert status == 408
    assert time.monotonic() - started < 3
    assert strict.app.sessions == {}


def test_session_cap_503_and_idle_timeout(strict: LiveServer) -> None:
    """Session cap (503 beyond it, nothing allocated) and idle timeout (404 afterwards).

    Spec: 2025-11-25 basic/transports.mdx §Session Management 2-4.
    """
    with httpx2.Client(timeout=5) as c:
        ids = []
        for _ in range(3):
            last_sent = time.monotonic()  # the newest session is active from here on
            r = c.post(strict.url, json=init_body(), headers=headers(version=None))
            ids.append(r.headers["mcp-session-id"])
        r = c.post(strict.url, json=init_body(), headers=headers(version=None))
        assert r.status_code == 503 and "retry-after" in r.headers
        assert sorted(strict.app.sessions) == sorted(ids)
        while strict.app.sessions:  # idle_timeout=0.4, reaped every 0.1 s
            assert time.monotonic() - last_sent < 5, "idle sessions were not reaped"
            time.sleep(0.05)
        assert time.monotonic() - last_sent >= 0.4  # not before the timeout
        r = c.post(
            strict.url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=headers(ids[0])
        )
        assert r.status_code == 404


def test_session_bound_to_principal(strict: LiveServer) -> None:
    """§Session Management / security best practices: a session created by one principal is
    unknown (the same 404) to another one and to an unauthenticated request."""
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    with httpx2.Client(timeout=5) as c:
        r = c.post(
            strict.url, json=init_body(), headers=headers(version=None, **{"x-user": "alice"})
        )
        sid = r.headers["mcp-session-id"]
        as_bob = c.post(strict.url, json=ping, headers=headers(sid, **{"x-user": "bob"}))
        unknown = c.post(strict.url, json=ping, headers=headers("nope", **{"x-user": "bob"}))
        assert as_bob.status_code == unknown.status_code == 404
        assert as_bob.content == unknown.content
        assert c.post(strict.url, json=ping, headers=headers(sid)).status_code == 404
        assert c.delete(strict.url, headers=headers(sid, **{"x-user": "bob"})).status_code == 404
        assert (
            c.post(strict.url, json=ping, headers=headers(sid, **{"x-user": "alice"})).status_code
            == 200
        )


def test_session_ids_unique_and_well_formed() -> None:
    """§Session Management 1: ids are cryptographically random, globally unique, visible
    ASCII (0x21-0x7E); 100,000 of them, all distinct and of the same form."""
    pattern = re.compile(r"^[A-Za-z0-9_-]{43}$")
    ids = {new_session_id() for _ in range(100_000)}
    assert len(ids) == 100_000
    assert all(pattern.match(i) for i in ids)


def test_live_session_ids_have_the_same_form(strict: LiveServer) -> None:
    """§Session Management 1: the ids a real server hands out match the generator's form."""
    with httpx2.Client(timeout=5) as c:
        sid = c.post(strict.url, json=init_body(), headers=headers(version=None)).headers[
            "mcp-session-id"
        ]
    assert re.match(r"^[A-Za-z0-9_-]{43}$", sid)


REJECTED: list[tuple[str, list[tuple[str, str]], bytes, int]] = [
    ("POST", [("host", "evil.example.com")], INIT, 421),
    ("POST", [("host", "localhost"), ("origin", "null")], INIT, 403),
    ("PUT", [("host", "localhost")], b"", 405),
    (
        "POST",
        [
            ("host", "localhost"),
            ("content-type", "text/plain"),
            ("accept", "application/json, text/event-stream"),
        ],
        INIT,
        415,
    ),
    (
        "POST",
        [("host", "localhost"), ("content-type", "application/json"), ("accept", "text/html")],
        INIT,
        406,
    ),
    (
        "POST",
        [
            ("host", "localhost"),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("content-length", str(5 * MIB)),
        ],
        b"",
        413,
    ),
    (
        "POST",
        [
            ("host", "localhost"),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ],
        b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
        400,
    ),
    (
        "POST",
        [
            ("host", "localhost"),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-session-id", "x" * 43),
        ],
        b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
        404,
    ),
    (
        "POST",
        [
            ("host", "localhost"),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ],
        b"{oops",
        400,
    ),
    (
        "GET",
        [("host", "localhost"), ("accept", "text/event-stream"), ("mcp-session-id", "nope")],
        b"",
        404,
    ),
    ("DELETE", [("host", "localhost"), ("mcp-session-id", "nope")], b"", 404),
]


async def test_100k_rejected_requests_allocate_nothing() -> None:
    """§Session Management / safe defaults: 100,000 rejected requests of every kind leave the
    session table empty and memory flat (in-process ASGI calls, for speed: each request is
    a prebuilt scope and body, so what is measured is the application's own allocation)."""
    app = StreamableHTTPApp(make_server())
    for method, hdrs, body, expected in REJECTED:  # the statuses, through the full harness
        status, _, _ = await asgi_call(app, method, hdrs, [body])
        assert status == expected, (method, hdrs)

    statuses: list[int] = []

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    calls = []
    for method, hdrs, body, expected in REJECTED:
        scope = {
            "type": "http",
            "method": method,
            "path": "/mcp",
            "server": ("127.0.0.1", 8000),
            "headers": [(k.encode(), v.encode()) for k, v in hdrs],
        }
        message = {"type": "http.request", "body": body, "more_body": False}

        async def receive(message: MutableMapping[str, Any] = message) -> Any:
            return message

        calls.append((scope, receive, expected))

    async def burst(count: int) -> None:
        statuses.clear()
        for i in range(count):
            scope, receive, _ = calls[i % len(calls)]
            await app(scope, receive, send)
            if i % 1000 == 999:
                # A server's event loop runs between requests (here nothing ever suspends):
                # that is when it drops the cancelled body-deadline timers.
                await asyncio.sleep(0)
        wanted = [calls[i % len(calls)][2] for i in range(count)]
        assert statuses == wanted

    await burst(2000)  # caches settle before the measurement
    gc.collect()
    blocks = sys.getallocatedblocks()
    await burst(100_000)
    statuses.clear()
    gc.collect()
    grown = sys.getallocatedblocks() - blocks
    assert app.sessions == {}
    assert app._reaper is None
    assert grown < 1000, f"{grown} memory blocks more after 100,000 rejected requests"


def test_rejected_requests_on_a_real_server(strict: LiveServer) -> None:
    """The same on a real server, sampled: 200 rejected requests, no session left.

    Spec: 2025-11-25 basic/transports.mdx §Security Warning, §Session Management.
    """
    sample = [r for r in REJECTED if r[3] != 413]  # a declared 413 is tested on its own above
    with httpx2.Client(timeout=5) as c:
        for i in range(200):
            method, hdrs, body, expected = sample[i % len(sample)]
            h = dict(hdrs)
            if h.get("host") == "localhost":
                h["host"] = f"localhost:{strict.port}"
            r = c.request(method, strict.url, headers=h, content=body)
            assert r.status_code == expected, (method, hdrs, r.status_code)
    assert strict.app.sessions == {}


async def test_session_cap_and_idle_timeout_are_on_by_default() -> None:
    """§Session Management / safe defaults: with no options at all, live sessions are capped
    (the 1,001st initialize gets 503 and allocates nothing) and the idle-session reaper runs
    (30 min) from the first session on."""
    app = StreamableHTTPApp(make_server())
    assert (app.max_sessions, app.idle_timeout, app.body_timeout) == (1000, 1800.0, 30.0)
    assert (app.init_timeout, app.max_sessions_per_client) == (10.0, 100)
    app.init_timeout = None  # about the idle timeout here (init_timeout: ..._hostile.py)
    hdrs = [
        ("host", "127.0.0.1:8000"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ]
    try:
        status, _, _ = await asgi_call(app, "POST", hdrs, [INIT])
        assert status == 200
        reaper = app._reaper
        assert reaper is not None and not reaper.done()
        results = await asyncio.gather(*(asgi_call(app, "POST", hdrs, [INIT]) for _ in range(999)))
        assert {r[0] for r in results} == {200} and len(app.sessions) == 1000
        status, got, _ = await asgi_call(app, "POST", hdrs, [INIT])
        assert status == 503 and got["retry-after"]
        assert len(app.sessions) == 1000
        # A session idle past the timeout is reaped (its clock turned back by 31 minutes).
        victim = next(iter(app.sessions.values()))
        victim.last_active -= 1860
        await app._reap_once()
        assert victim.id not in app.sessions and victim.closed
        status, _, _ = await asgi_call(app, "POST", hdrs, [INIT])
        assert status == 200
    finally:
        await app.aclose()
    assert app.sessions == {}


def test_host_and_origin_are_trimmed_of_http_whitespace_only() -> None:
    """RFC 9110 §5.5: SP and HTAB around a value, nothing else. ``str.strip`` also removed a
    no-break space (and U+0085, U+2028, ...), so ``Host: localhost<NBSP>`` passed the loopback
    check while a proxy routes on the text it sees (the sibling of ``make fuzz``'s
    ``Authorization:<NBSP>DPoP`` finding, issue 28)."""
    from mcpbind.http.server.security import HostPolicy

    policy = HostPolicy(None, None)
    assert policy.host_ok(" localhost:8000\t", loopback=True)
    assert policy.origin_ok("\thttp://localhost:8000 ", "localhost:8000", loopback=True)
    for odd in ("\xa0", "\x85", "\u2028"):
        assert not policy.host_ok(f"localhost{odd}", loopback=True), repr(odd)
        assert not policy.host_ok(f"{odd}localhost", loopback=True), repr(odd)
        origin = f"http://localhost:8000{odd}"
        assert not policy.origin_ok(origin, "localhost:8000", loopback=True), repr(odd)
    pinned = HostPolicy(["api.example.com"], ["https://app.example.com"])
    assert not pinned.host_ok("api.example.com\xa0", loopback=False)
    assert not pinned.origin_ok("https://app.example.com\xa0", "api.example.com", loopback=False)
