"""Sessionless Streamable HTTP (``StreamableHTTPApp(sessionless=True)``, 2025 revisions):
basic/transports.mdx §Session Management lets a server issue no session, and then nothing
reaches the client after its request's response. basic/lifecycle.mdx §Capability Negotiation:
advertise only what can be honoured -- no logging (a level set by ``logging/setLevel`` does
not outlive that request), no ``resources.subscribe``, no ``listChanged`` -- and refuse those
requests (-32601) instead of answering ``{}``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import msgspec
import pytest

from mcpbind import LATEST_HANDSHAKE, Client, Server
from mcpbind import types as t
from mcpbind.http import StreamableHTTPApp
from mcpbind.protocol import METHOD_NOT_FOUND, LocalProtocolError
from mcpbind.server.limits import server_inflight

from ._raw import asgi_call
from ._support import LiveServer, headers, init_body, make_server, messages, sse_events


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def sessionless() -> Iterator[LiveServer]:
    server = LiveServer(StreamableHTTPApp(make_server(), sessionless=True)).start()
    try:
        yield server
    finally:
        server.stop()


def post(live: LiveServer, body: dict[str, Any], version: str | None = "2025-11-25") -> Any:
    with httpx2.Client(timeout=10) as client:
        r = client.post(live.url, json=body, headers=headers(version=version))
    (reply,) = messages(list(sse_events(iter(r.text.splitlines()))))
    return reply


def test_initialize_advertises_only_what_is_delivered(sessionless: LiveServer) -> None:
    """lifecycle.mdx §Capability Negotiation: tools, resources and prompts stay; logging,
    ``subscribe`` and ``listChanged`` are left out."""
    caps = post(sessionless, init_body(), version=None)["result"]["capabilities"]
    assert caps == {"tools": {}, "resources": {}, "prompts": {}}


@pytest.mark.parametrize(
    ("method", "params"),
    [("logging/setLevel", {"level": "debug"}), ("resources/subscribe", {"uri": "test://hello"})],
)
def test_undeliverable_requests_are_refused(
    sessionless: LiveServer, method: str, params: dict[str, Any]
) -> None:
    """logging.mdx §Capabilities and resources.mdx §Subscriptions: not declared, so -32601
    (no longer ``{}`` for a level or subscription that nothing honours)."""
    reply = post(sessionless, {"jsonrpc": "2.0", "id": 2, "method": method, "params": params})
    assert reply["error"]["code"] == METHOD_NOT_FOUND
    assert "not declared" in reply["error"]["message"]


@pytest.mark.anyio
async def test_client_sees_the_reduced_capabilities(sessionless: LiveServer) -> None:
    """The mcpbind client over the same app: calls work; ``set_level`` is refused locally as
    for any server without logging (logging.mdx §Capabilities)."""
    async with Client(sessionless.url, protocol_version=LATEST_HANDSHAKE) as client:
        assert client.server_capabilities is not None
        assert client.server_capabilities.logging is msgspec.UNSET
        echoed = await client.call("echo", {"text": "hi"})
        assert [c.text for c in echoed.content if isinstance(c, t.TextContent)] == ["hi"]
        with pytest.raises(LocalProtocolError, match="'logging'"):
            await client.set_level(t.SetLevelRequestParams(level="debug"))


def post_all(live: LiveServer, body: Any, version: str | None = "2025-11-25") -> list[Any]:
    with httpx2.Client(timeout=10) as client:
        r = client.post(live.url, json=body, headers=headers(version=version))
    assert r.status_code == 200 and "mcp-session-id" not in r.headers
    return messages(list(sse_events(iter(r.text.splitlines()))))


def tool_call(rid: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments, "_meta": {"progressToken": f"p{rid}"}}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def test_progress_reaches_the_request_stream(sessionless: LiveServer) -> None:
    """transports.mdx §Sending Messages to the Server: notifications related to the request
    go on its SSE stream, before its response."""
    got = post_all(sessionless, tool_call(3, "chatty", {"n": 2, "delay": 0}))
    assert [m["params"]["progress"] for m in got[:-1]] == [1, 2]
    assert got[-1]["id"] == 3 and got[-1]["result"]["content"][0]["text"] == "sent 2"


def test_the_server_cannot_send_requests_to_the_client(sessionless: LiveServer) -> None:
    """Without a session no stream is left for a server-to-client request (sampling): the
    tool's attempt fails its own request, nothing is sent to the client."""
    got = post_all(sessionless, tool_call(4, "ask", {"question": "?"}))
    assert len(got) == 1 and got[0]["id"] == 4
    assert got[0]["result"]["isError"] is True
    assert "sends no requests to the client" in got[0]["result"]["content"][0]["text"]


def test_a_batch_is_answered_on_2025_03_26(sessionless: LiveServer) -> None:
    """2025-03-26 §Batching: every request of the batch is answered on the POST's stream."""
    batch = [tool_call(5, "echo", {"text": "a"}), tool_call(6, "echo", {"text": "b"})]
    got = post_all(sessionless, batch, version="2025-03-26")
    assert sorted((m["id"], m["result"]["content"][0]["text"]) for m in got) == [
        (5, "a"),
        (6, "b"),
    ]
    with httpx2.Client(timeout=10) as client:
        r = client.post(sessionless.url, json=batch, headers=headers(version="2025-11-25"))
    assert r.status_code == 400  # batches went away in 2025-06-18


@pytest.mark.anyio
async def test_every_request_of_a_batch_counts_against_the_server_in_flight_cap() -> None:
    """Issue 28 F2: a 2025-03-26 batch counted once against the server's in-flight cap and
    ran every entry at once (4 POSTs of 38,000 entries ran 152,000 handlers: 33 MB -> 673 MB,
    no "Server busy"). Each entry takes a slot; a batch that does not fit is refused whole,
    each of its requests answered "Server busy", and nothing of it runs."""
    server = Server("bounded")
    started = 0
    release = asyncio.Event()

    @server.tool()
    async def hold() -> str:
        nonlocal started
        started += 1
        await release.wait()
        return "held"

    shared = server_inflight(server)
    shared.limit = 8
    app = StreamableHTTPApp(server, sessionless=True, json_response=True)

    def batch(n: int, first: int = 1) -> list[bytes]:
        calls = [
            {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "hold"}}
            for i in range(first, first + n)
        ]
        return [json.dumps(calls).encode()]

    sent = list(headers(version="2025-03-26", host="127.0.0.1:8000").items())
    with anyio.fail_after(10):  # run at once, the batch's handlers would hold it forever
        status, _, body = await asgi_call(app, headers=sent, chunks=batch(20))
    replies = json.loads(body)
    assert status == 200 and [r["id"] for r in replies] == list(range(1, 21))
    assert all("a batch of 20 requests does not fit" in r["error"]["message"] for r in replies)
    assert started == 0 and shared.count == 0

    running = asyncio.get_running_loop().create_task(asgi_call(app, headers=sent, chunks=batch(6)))
    with anyio.fail_after(10):
        while started < 6:  # noqa: ASYNC110 - bounded: until the batch's handlers run
            await asyncio.sleep(0.01)
    assert shared.count == 6
    status, _, body = await asgi_call(app, headers=sent, chunks=batch(3, first=100))
    assert [r["error"]["code"] for r in json.loads(body)] == [-32603] * 3  # 6 + 3 > 8
    assert started == 6
    release.set()
    status, _, body = await running
    assert [r["result"]["content"][0]["text"] for r in json.loads(body)] == ["held"] * 6
    assert shared.count == 0


@pytest.mark.anyio
async def test_a_batch_on_a_session_counts_each_request_too() -> None:
    """The sibling of the sessionless case, on a session (2025-03-26): each request of a
    batch takes its own in-flight slot, so past the server's cap the rest are answered
    "Server busy" one by one, and nothing beyond the cap runs."""
    server = Server("bounded-session")
    started = 0
    release = asyncio.Event()

    @server.tool()
    async def hold() -> str:
        nonlocal started
        started += 1
        await release.wait()
        return "held"

    shared = server_inflight(server)
    shared.limit = 8
    app = StreamableHTTPApp(server, json_response=True)
    host = "127.0.0.1:8000"
    init = [json.dumps(init_body("2025-03-26")).encode()]
    status, got, _ = await asgi_call(
        app, headers=list(headers(version=None, host=host).items()), chunks=init
    )
    assert status == 200
    sent = list(headers(got["mcp-session-id"], version="2025-03-26", host=host).items())
    note = [json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()]
    assert (await asgi_call(app, headers=sent, chunks=note))[0] == 202
    calls = [
        {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "hold"}}
        for i in range(1, 21)
    ]
    running = asyncio.get_running_loop().create_task(
        asgi_call(app, headers=sent, chunks=[json.dumps(calls).encode()])
    )
    with anyio.fail_after(10):
        while started < 8 or shared.count < 8:  # noqa: ASYNC110 - bounded: handlers start
            await asyncio.sleep(0.01)
    release.set()
    with anyio.fail_after(10):
        status, _, body = await running
    replies = json.loads(body)
    assert started == 8 and len(replies) == 20
    busy = [r for r in replies if "error" in r]
    assert len(busy) == 12 and all("Server busy" in r["error"]["message"] for r in busy)
    assert shared.count == 0
    await app.aclose()
