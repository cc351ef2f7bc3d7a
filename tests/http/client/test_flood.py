"""Issue 28 (F13): a server flooding notifications over HTTP used to grow the client without
bound (an endless SSE stream of ``notifications/message`` took it to 651 MB in a minute),
while stdio stays flat because it is read only as fast as the session takes messages. The
HTTP client transports now apply the same backpressure: the GET stream, a request's SSE
stream and the 2024-11-05 legacy stream stop being read while ``max_buffered_messages`` wait
for the session, so the server's writes block; nothing is lost once the session reads on."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from support.live_server import LiveServer, answer_lifespan

from mcpbind.http.client import LegacySSETransport, StreamableHTTPTransport

pytestmark = pytest.mark.anyio

#: 1500 events of 16 KiB: 24 MiB, far more than the socket buffers of one connection.
EVENTS = 1500
PAD = "x" * 16 * 1024
SSE = [(b"content-type", b"text/event-stream"), (b"mcp-session-id", b"s-1")]


class Flood:
    """What the flooding server sent, shared with the test (the server runs in a thread)."""

    def __init__(self) -> None:
        self.sent = 0
        self.finished = threading.Event()


FLOODS: dict[str, Flood] = {}


def _event(seq: int) -> bytes:
    params = {"level": "info", "data": {"seq": seq, "pad": PAD}}
    message = {"jsonrpc": "2.0", "method": "notifications/message", "params": params}
    return b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n"


async def _flood(
    send: Any, receive: Any, flood: Flood, head: bytes = b"", tail: bytes = b""
) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": SSE})
    if head:
        await send({"type": "http.response.body", "body": head, "more_body": True})
    for seq in range(EVENTS):
        await send({"type": "http.response.body", "body": _event(seq), "more_body": True})
        flood.sent = seq + 1
    if tail:
        await send({"type": "http.response.body", "body": tail, "more_body": True})
    flood.finished.set()
    await receive()  # open until the client goes


async def _reply(send: Any, status: int, body: bytes = b"") -> None:
    headers = [(b"content-type", b"application/json"), (b"mcp-session-id", b"s-1")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await answer_lifespan(receive, send)
        return
    mode = scope["path"].strip("/").split("/")[0]
    flood = FLOODS[mode]
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if scope["method"] == "GET":
        if mode == "legacy":
            endpoint = b"event: endpoint\ndata: /legacy/messages\n\n"
            await _flood(send, receive, flood, head=endpoint)
        elif mode == "get":
            await _flood(send, receive, flood)
        else:
            await _reply(send, 405)
        return
    msg = json.loads(body)
    if "id" not in msg:
        await _reply(send, 202)
    elif msg["method"] == "tools/call" and mode == "post":
        result = {"jsonrpc": "2.0", "id": msg["id"], "result": {"content": []}}
        await _flood(
            send, receive, flood, tail=b"event: message\ndata: %s\n\n" % json.dumps(result).encode()
        )
    else:
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "f", "version": "1"},
        }
        await _reply(
            send, 200, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
        )


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    live = LiveServer(app).start()
    try:
        yield live.url.rsplit("/", 1)[0]
    finally:
        live.stop()


def _client() -> httpx2.AsyncClient:
    """A small fixed receive buffer: the kernel then holds little of the flood for us."""
    options = [(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)]
    return httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(socket_options=options))


def _request(rid: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()


INIT = _request(
    1,
    "initialize",
    {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


async def _stalls(flood: Flood) -> bool:
    """Poll the server until it is stuck (no event sent for a second, backpressure) or has
    sent the whole flood (nothing held it back: the client buffered it all)."""
    last, since = -1, time.monotonic()
    with anyio.fail_after(120):
        while not flood.finished.is_set():
            if flood.sent != last:
                last, since = flood.sent, time.monotonic()
            elif time.monotonic() - since > 1.0:
                return True
            await anyio.sleep(0.05)
    return False


async def _drain(receive: Any) -> list[int]:
    """Every notification's sequence number, until the last one."""
    seqs: list[int] = []
    with anyio.fail_after(120):
        while not seqs or seqs[-1] < EVENTS - 1:
            message = json.loads(await receive())
            if message.get("method") == "notifications/message":
                seqs.append(message["params"]["data"]["seq"])
    return seqs


@pytest.mark.parametrize("mode", ["get", "post"])
async def test_streamable_streams_are_read_no_faster_than_the_session(base: str, mode: str) -> None:
    """The GET stream and a request's SSE stream: the server's writes block while the session
    is not reading; then every notification arrives, in order."""
    flood = FLOODS[mode] = Flood()
    async with (
        _client() as http,
        StreamableHTTPTransport(f"{base}/{mode}", client=http) as transport,
    ):
        await transport.send(INIT)
        await transport.send(INITIALIZED)
        if mode == "post":
            await transport.send(_request(2, "tools/call", {"name": "flood"}))
        assert await _stalls(flood), f"the client buffered all {EVENTS} events"
        assert flood.sent < EVENTS
        assert json.loads(await transport.receive())["id"] == 1
        assert await _drain(transport.receive) == list(range(EVENTS))
        assert flood.finished.is_set()


async def test_legacy_stream_is_read_no_faster_than_the_session(base: str) -> None:
    """The 2024-11-05 HTTP+SSE stream: the same backpressure, nothing lost."""
    flood = FLOODS["legacy"] = Flood()
    async with _client() as http, LegacySSETransport(f"{base}/legacy", client=http) as transport:
        assert await _stalls(flood), f"the client buffered all {EVENTS} events"
        assert flood.sent < EVENTS
        assert await _drain(transport.receive) == list(range(EVENTS))
        assert flood.finished.is_set()
