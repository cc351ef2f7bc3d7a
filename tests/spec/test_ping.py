"""basic/utilities/ping.mdx (2024-11-05, 2025-03-26, 2025-11-25): either side may ping; the
receiver answers promptly with an empty result."""

from __future__ import annotations

import json

import anyio
import pytest

from mcpbind import Client, RequestOptions, RequestTimeout
from mcpbind.transports import TransportClosed, memory_pair

from .conftest import Connect
from .helpers import exchange, memory_session, raw_connection, text_of
from .servers import raw_replies

pytestmark = pytest.mark.anyio


async def test_client_pings_server(connect: Connect) -> None:
    """ping.mdx §Behavior Requirements 1: the receiver MUST respond promptly with an empty
    response (client -> server)."""
    async with connect("full") as client:
        result = await client.ping(options=RequestOptions(timeout=5))
    assert result == {}


async def test_server_pings_client(connect: Connect) -> None:
    """ping.mdx §Overview / §Behavior Requirements 1: the server may ping the client too, which
    answers with an empty result (server -> client, from a tool handler)."""
    async with connect("full") as client:
        result = await client.call("ping_client")
    assert text_of(result) == "{}"


@pytest.mark.memory_only
async def test_ping_response_is_exactly_empty_and_echoes_the_id(transport: str) -> None:
    """ping.mdx §Message Format / §Behavior Requirements 1: ``{"jsonrpc": "2.0", "id": "123",
    "result": {}}`` -- a string id is echoed as a string, the result is an empty object."""
    async with raw_connection(transport) as peer:
        reply = await exchange(peer, {"jsonrpc": "2.0", "id": "123", "method": "ping"})
    assert reply == {"jsonrpc": "2.0", "id": "123", "result": {}}


@pytest.mark.memory_only
async def test_client_answers_server_ping_on_the_wire() -> None:
    """ping.mdx §Behavior Requirements 1, seen on the wire: the client's response to the
    server's ping is an empty object for the same id."""
    async with memory_session("full") as (client, _session, wire):
        await client.call("ping_client")
    (ping,) = [m for m in wire.sent if m.get("method") == "ping"]
    (pong,) = [m for m in wire.received if m.get("id") == ping["id"] and "method" not in m]
    assert pong == {"jsonrpc": "2.0", "id": ping["id"], "result": {}}


@pytest.mark.memory_only
async def test_unanswered_ping_times_out_and_is_cancelled() -> None:
    """ping.mdx §Behavior Requirements 2: with no response within a timeout the sender may
    consider the connection stale; lifecycle.mdx §Timeouts: it stops waiting and sends
    notifications/cancelled."""
    client_end, server_end = memory_pair()
    seen: list[dict[str, object]] = []

    async def mute_peer() -> None:  # handshakes, then never answers a ping
        try:
            while True:
                message = json.loads(await server_end.receive())
                seen.append(message)
                if message.get("method") != "ping":
                    for reply in raw_replies(message, "2025-11-25"):
                        await server_end.send(json.dumps(reply).encode())
        except TransportClosed:
            pass
        finally:
            await server_end.aclose()

    async with anyio.create_task_group() as tg:
        tg.start_soon(mute_peer)
        async with Client(client_end) as client:
            with pytest.raises(RequestTimeout):
                await client.ping(options=RequestOptions(timeout=0.1))
            await anyio.sleep(0.05)
    ping = next(m for m in seen if m.get("method") == "ping")
    cancel = next(m for m in seen if m.get("method") == "notifications/cancelled")
    assert cancel["params"] == {"requestId": ping["id"], "reason": "timeout"}
