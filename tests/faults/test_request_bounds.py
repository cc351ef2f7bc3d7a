"""Issue 16 (5): what one peer can make the server hold is bounded.

- ``_meta`` is decoded into Python objects and held while the handler runs: one larger than
  ``SessionOptions.max_meta_bytes`` (64 KiB) is refused (-32602) before anything is decoded;
- requests in flight: ``SessionOptions.max_inflight`` (64) per session and
  ``MAX_SERVER_INFLIGHT`` (512) across a server's sessions; beyond, "Server busy" (-32603)
  at once, nothing runs.
"""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import msgspec
import pytest
from support.polling import until_async

from mcpbind import LATEST_HANDSHAKE, LATEST_STATELESS, Client, McpError, Server
from mcpbind import types as t
from mcpbind.protocol import INTERNAL_ERROR, INVALID_PARAMS, Session, SessionOptions
from mcpbind.server.limits import MAX_SERVER_INFLIGHT, server_inflight
from mcpbind.server.session import ServerSession
from mcpbind.transports import memory_pair

pytestmark = pytest.mark.anyio

BIG_META = {"blob": ["x" * 64] * 60_000}  # ~4 MiB of JSON, ~20 MiB once decoded


def make_server() -> Server:
    server = Server("bounds")

    @server.tool()
    async def slow(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "done"

    return server


def test_large_meta_is_refused_before_decoding() -> None:
    server = Session("server", version="2025-11-25")
    message = msgspec.json.encode(
        {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"_meta": BIG_META}}
    )
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        events = server.receive(message)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    [event] = events
    reply = msgspec.json.decode(event.data)  # type: ignore[attr-defined]
    assert reply["id"] == 3 and reply["error"]["code"] == INVALID_PARAMS
    assert "_meta exceeds 65536 bytes" in reply["error"]["message"]
    assert peak < 1024 * 1024, f"refusing a 4 MiB _meta allocated {peak} bytes"
    small = msgspec.json.encode(
        {"jsonrpc": "2.0", "id": 4, "method": "ping", "params": {"_meta": {"k": "v" * 1000}}}
    )
    assert type(server.receive(small)[0]).__name__ == "RequestReceived"


ERAS = [LATEST_HANDSHAKE, LATEST_STATELESS]


@asynccontextmanager
async def connected(
    server: Server, options: SessionOptions, version: str = LATEST_HANDSHAKE
) -> AsyncIterator[Client]:
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(ServerSession(server, server_end, options=options).run)
        async with Client(client_end, protocol_version=version) as client:
            yield client
        tg.cancel_scope.cancel()


async def _outcome(client: Client, seconds: float) -> str:
    try:
        await client.call("slow", {"seconds": seconds})
    except McpError as exc:
        assert exc.code == INTERNAL_ERROR
        return exc.message
    return "done"


@pytest.mark.parametrize("version", ERAS)
async def test_concurrent_requests_per_session_are_bounded(version: str) -> None:
    async with connected(make_server(), SessionOptions(max_inflight=4), version) as client:
        results = await asyncio.gather(*(_outcome(client, 0.5) for _ in range(12)))
        assert results.count("done") == 4
        busy = [r for r in results if r != "done"]
        assert len(busy) == 8 and all("4 requests in flight on this session" in r for r in busy)
        assert await _outcome(client, 0) == "done"  # slots are freed


@pytest.mark.parametrize("version", ERAS)
async def test_concurrent_requests_per_server_are_bounded(version: str) -> None:
    server = make_server()
    shared = server_inflight(server)
    assert shared.limit == MAX_SERVER_INFLIGHT
    shared.limit = 3
    options = SessionOptions(max_inflight=10)
    async with (
        connected(server, options, version) as one,
        connected(server, options, version) as two,
    ):
        calls = [_outcome(c, 0.5) for c in (one, two) for _ in range(3)]
        results = await asyncio.gather(*calls)
        assert results.count("done") == 3
        assert all("on this server" in r for r in results if r != "done")
        assert shared.count == 0
        assert await _outcome(two, 0) == "done"


@pytest.mark.parametrize("version", ERAS)
async def test_slow_calls_with_big_meta_keep_memory_flat(version: str) -> None:
    """20 slow concurrent calls with 4 MiB ``_meta`` reached 476 MB; now each is refused
    before decoding and the session holds nothing for it."""
    async with connected(make_server(), SessionOptions(), version) as client:
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]

            async def one() -> int:
                with pytest.raises(McpError) as info:
                    params = t.CallToolRequestParams(
                        name="slow", arguments={"seconds": 1}, meta=BIG_META
                    )
                    await client.call_tool(params)
                return info.value.code

            codes = await asyncio.gather(*(one() for _ in range(20)))
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
        assert codes == [INVALID_PARAMS] * 20
        # The bound: at most one message (the client may keep its last encoded request), not
        # 20 x 21.5 MiB of decoded _meta.
        assert held < 6 * 1024 * 1024, f"{held} bytes held after 20 refused calls"


async def test_stateless_request_cancelled_before_it_starts_frees_its_slot() -> None:
    """A 2026-07-28 request and its ``notifications/cancelled`` read together: the task is
    cancelled before its first step, and its in-flight slots are still given back."""
    server = make_server()
    shared = server_inflight(server)
    client_end, server_end = memory_pair()
    meta = {
        "io.modelcontextprotocol/protocolVersion": LATEST_STATELESS,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    }
    async with anyio.create_task_group() as tg:
        session = ServerSession(server, server_end)
        tg.start_soon(session.run)
        for rid in range(50):
            # 30 s: longer than the bounded wait below, so only the cancellation frees a slot.
            params = {"name": "slow", "arguments": {"seconds": 30}, "_meta": meta}
            call = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": rid, "_meta": meta},
            }
            await client_end.send(msgspec.json.encode(call))
            await client_end.send(msgspec.json.encode(cancel))
        await client_end.send(
            msgspec.json.encode(
                {"jsonrpc": "2.0", "id": "p", "method": "ping", "params": {"_meta": meta}}
            )
        )
        with anyio.fail_after(10):
            while b'"id":"p"' not in await client_end.receive():
                pass
        # The cancelled handlers unwind after the ping's answer: polled (bounded) until the
        # one in-flight table (both eras) is empty and no handler holds the limiter.
        await until_async(lambda: session.connection.idle and shared.count == 0)
        assert session.connection.idle  # one in-flight table, for both eras
        assert shared.count == 0
        await client_end.aclose()
        tg.cancel_scope.cancel()
