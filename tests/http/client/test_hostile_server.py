"""Issue 16 (10) on the Streamable HTTP client: a server answering with a malicious deep
``application/json`` result (or SSE event) used to leave the call waiting for its timeout;
the call now fails at once (2025-11-25 basic/transports.mdx §Streamable HTTP; the client's
nesting bound is the session core's, 128 levels) and the session goes on."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from support.live_server import LiveServer, answer_lifespan

from mcpbind import Client, McpError, RequestOptions
from mcpbind.http.client import connect_http

pytestmark = pytest.mark.anyio

DEEP = b"[" * 5000 + b"]" * 5000


async def hostile(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await answer_lifespan(receive, send)
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if scope["method"] != "POST":
        await send({"type": "http.response.start", "status": 405, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    msg = json.loads(body)
    headers = [(b"content-type", b"application/json"), (b"mcp-session-id", b"s-1")]
    if "id" not in msg:
        await send({"type": "http.response.start", "status": 202, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
        return
    rid = json.dumps(msg["id"]).encode()
    if msg["method"] == "initialize":
        result = {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"},
        }
        out = b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (rid, json.dumps(result).encode())
    elif msg["method"] == "tools/call":
        name = msg["params"]["name"]
        if name == "deep-sse":
            sse = [(b"content-type", b"text/event-stream"), (b"mcp-session-id", b"s-1")]
            await send({"type": "http.response.start", "status": 200, "headers": sse})
            data = b'{"jsonrpc":"2.0","id":%s,"result":{"x":%s}}' % (rid, DEEP)
            await send(
                {"type": "http.response.body", "body": b"event: message\ndata: " + data + b"\n\n"}
            )
            return
        out = b'{"jsonrpc":"2.0","result":{"content":[],"x":%s},"id":%s}' % (DEEP, rid)
    else:
        out = b'{"jsonrpc":"2.0","id":%s,"result":{}}' % rid
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": out})


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    live = LiveServer(hostile).start()
    try:
        yield live.url
    finally:
        live.stop()


@pytest.mark.parametrize("tool", ["deep-json", "deep-sse"])
async def test_deep_result_fails_the_call_at_once(url: str, tool: str) -> None:
    async with (
        connect_http(url) as transport,
        Client(transport, protocol_version="2025-11-25") as client,
    ):
        start = time.monotonic()
        with anyio.fail_after(30), pytest.raises(McpError) as info:
            await client.call(tool, options=RequestOptions(timeout=120))
        assert time.monotonic() - start < 30
        assert "nesting exceeds 128 levels" in info.value.message
        assert await client.ping() is not None
