"""Issue 16 on stdio: hostile lines against a real server process (``fault_server.py``).

basic/transports.mdx §stdio (one JSON message per line), basic/index.mdx §Messages (an error
response carries the request's id unless it could not be read), basic/lifecycle.mdx.
"""

from __future__ import annotations

import time

import anyio
import pytest

from mcpbind import Client, McpError, RequestOptions

from .test_stdio_malformed import INVALID_REQUEST, handshake, raw_server, request, rude_server

pytestmark = pytest.mark.anyio


def alternating(levels: int) -> bytes:
    """About 2 bytes a level: ``[{"":[{"":...`` is the smallest alternating nesting."""
    opened = b"".join(b"[" if i % 2 == 0 else b'{"":' for i in range(levels))
    closed = b"".join(b"]" if i % 2 == 0 else b"}" for i in reversed(range(levels)))
    return opened + b"0" + closed


@pytest.mark.parametrize("levels", [129, 600, 1000, 3000])
async def test_deep_line_before_initialize_is_answered_and_server_lives(levels: int) -> None:
    """Issue 16 (1): a ~2 KB message nested ~1,000 deep used to crash the server before
    ``initialize`` (RecursionError in the era classifier). Now: -32600 on its id, and the
    server goes on to a normal handshake and call."""
    async with raw_server() as peer:
        line = b'{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":'
        line += alternating(levels) + b"}}"
        await peer.send(line)
        reply = await peer.receive()
        assert reply["id"] == "deep" and reply["error"]["code"] == INVALID_REQUEST
        assert "nesting exceeds 128 levels" in reply["error"]["message"]
        # A too-deep stateless-era (2026-07-28) request is refused the same way.
        modern = b'{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":'
        modern += b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28","x":'
        await peer.send(modern + alternating(levels) + b"}}}")
        reply = await peer.receive()
        assert reply["id"] == 5 and reply["error"]["code"] == INVALID_REQUEST
        # No id to read: null, still no crash.
        await peer.send(b"[" * levels + b"]" * levels)
        assert (await peer.receive())["id"] is None
        init = await handshake(peer)
        assert init["result"]["protocolVersion"] == "2025-11-25"
        await peer.send(request(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}))
        result = await peer.receive()
        assert result["id"] == 1 and result["result"]["content"][0]["text"] == "3"
        status, _ = await peer.close_and_wait()
        assert status == 0


@pytest.mark.parametrize("tool", ["huge-line", "huge-line-id-last", "deep-result"])
async def test_oversized_or_deep_answer_fails_the_call_at_once(tool: str) -> None:
    """Issue 16 (10): a server answering with a 64 MiB line (over the 16 MiB limit) or a
    result nested 5,000 deep used to leave the call waiting for its timeout; now the call
    fails at once (the id is read from the line's first or last bytes) and the session goes
    on. The client's timeout here is 120 s; the failure must come long before."""
    async with rude_server() as transport, Client(transport) as client:
        start = time.monotonic()
        with anyio.fail_after(60), pytest.raises(McpError) as info:
            await client.call(tool, options=RequestOptions(timeout=120))
        assert time.monotonic() - start < 60
        expected = "nesting exceeds" if tool == "deep-result" else "Message too large"
        assert expected in info.value.message
        assert await client.ping() is not None
