"""Behind a proxy: with ``trusted_proxies``, per-client caps (and the access log) use the
client address the proxy forwards in ``X-Forwarded-For``; that header from anyone else, or
written by the client itself, changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from mcpbind.http import StreamableHTTPApp
from mcpbind.http.server.proxies import TrustedProxies

from .app import build
from .processes import haproxy, worker
from .wire import HANDSHAKE, SSE


def test_the_rightmost_address_that_is_no_trusted_proxy_is_the_client() -> None:
    proxies = TrustedProxies(["10.0.0.0/8", "192.168.1.1"])
    xff = [(b"X-Forwarded-For", b"6.6.6.6, 5.6.7.8"), (b"x-forwarded-for", b"10.1.2.3")]
    assert proxies.client_of("192.168.1.1", xff) == "5.6.7.8"  # 10.1.2.3 is a proxy hop
    assert proxies.client_of("10.9.9.9", [(b"x-forwarded-for", b"1.2.3.4")]) == "1.2.3.4"
    # An untrusted peer's header is not read at all.
    assert proxies.client_of("8.8.8.8", [(b"x-forwarded-for", b"1.2.3.4")]) == "8.8.8.8"
    # Garbage stops the walk: what the last trusted hop said is kept.
    assert proxies.client_of("10.0.0.1", [(b"x-forwarded-for", b"1.2.3.4, bogus")]) == "10.0.0.1"
    assert proxies.client_of("10.0.0.1", [(b"x-forwarded-for", b"bogus, 1.2.3.4")]) == "1.2.3.4"
    assert proxies.client_of("10.0.0.1", []) == "10.0.0.1"
    # Only proxies all the way: the leftmost hop is the best there is.
    assert proxies.client_of("10.0.0.1", [(b"x-forwarded-for", b"10.0.0.2, 10.0.0.3")]) == (
        "10.0.0.2"
    )
    assert TrustedProxies(["::1"]).client_of("::1", [(b"x-forwarded-for", b"2001:db8::5")]) == (
        "2001:db8::5"
    )


@pytest.mark.anyio
async def test_the_scope_carries_the_client_address_for_the_log() -> None:
    """The client address replaces ``scope["client"]``, which the server's access log (and
    every per-client limit) reads."""
    app = StreamableHTTPApp(build(), path="/mcp", trusted_proxies=["127.0.0.1"])
    sent: list[Any] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    headers = [(b"host", b"localhost"), (b"x-forwarded-for", b"203.0.113.9")]
    scope: dict[str, Any] = {"type": "http", "method": "GET", "path": "/other", "headers": headers}
    for peer, seen in ((("127.0.0.1", 40000), "203.0.113.9"), (("127.0.0.5", 40000), "127.0.0.5")):
        scope["client"] = peer
        await app(scope, receive, send)
        assert scope["client"][0] == seen
    assert sent[0]["status"] == 404
    await app.aclose()


def _initialize(http: httpx.Client, url: str, forged: str | None = None) -> int:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": HANDSHAKE,
            "capabilities": {},
            "clientInfo": {"name": "proxy-test", "version": "0"},
        },
    }
    headers = dict(SSE) if forged is None else {**SSE, "x-forwarded-for": forged}
    return http.post(url, json=init, headers=headers).status_code


def _from(address: str) -> httpx.Client:
    """An HTTP client whose connections come from ``address`` (any 127/8 address is this
    machine's loopback)."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=10)


def test_session_caps_count_forwarded_clients_behind_haproxy(tmp_path: Path) -> None:
    """``max_sessions_per_client=1`` behind haproxy (which connects from 127.0.0.1): two
    clients (127.0.0.2 and 127.0.0.3) get a session each, since the cap counts the address
    haproxy forwards; a second session of either is refused, including one whose own
    ``X-Forwarded-For`` claims another address, and so is one sent straight to the worker
    (not through the trusted proxy) with a forged header."""
    options = {"max_sessions_per_client": 1, "trusted_proxies": ["127.0.0.1"]}
    with (
        worker("w0", options=options) as port,
        haproxy([port], tmp_path) as url,
        _from("127.0.0.2") as a,
        _from("127.0.0.3") as b,
    ):
        assert _initialize(a, url) == 200
        assert _initialize(b, url) == 200
        assert _initialize(b, url) == 503
        assert _initialize(b, url, forged="127.0.0.9") == 503
        direct = f"http://127.0.0.1:{port}/mcp"
        assert _initialize(a, direct, forged="127.0.0.8") == 503

    # Without trusted proxies every client is haproxy: the second client is refused.
    with (
        worker("w0", options={"max_sessions_per_client": 1}) as port,
        haproxy([port], tmp_path) as url,
        _from("127.0.0.2") as a,
        _from("127.0.0.3") as b,
    ):
        assert _initialize(a, url) == 200
        assert _initialize(b, url) == 503
