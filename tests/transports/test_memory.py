"""In-memory transport pair (2025-11-25 basic/transports.mdx §Custom Transports)."""

from __future__ import annotations

import anyio
import pytest

from mcpbind.transports import Transport, TransportClosed, memory_pair

pytestmark = pytest.mark.anyio


async def test_round_trip_both_directions_in_order() -> None:
    client, server = memory_pair()
    async with client, server:
        messages = [b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % i for i in range(10)]
        for message in messages:
            await client.send(message)
        assert [await server.receive() for _ in messages] == messages
        await server.send(b"\xff not utf-8")
        assert await client.receive() == b"\xff not utf-8"


async def _ping(sender: Transport, receiver: Transport) -> bytes:
    await sender.send(b"ping")
    return await receiver.receive()


async def test_usable_through_the_transport_protocol() -> None:
    client, server = memory_pair()
    async with client, server:
        assert await _ping(client, server) == b"ping"
        assert await _ping(server, client) == b"ping"


async def test_close_wakes_blocked_receive_on_other_side() -> None:
    client, server = memory_pair()
    async with client, server:
        with anyio.fail_after(1):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.aclose)
                with pytest.raises(TransportClosed, match="peer closed"):
                    await server.receive()


async def test_messages_sent_before_close_are_delivered_first() -> None:
    client, server = memory_pair()
    async with server:
        await client.send(b"last words")
        await client.aclose()
        assert await server.receive() == b"last words"
        with pytest.raises(TransportClosed):
            await server.receive()


async def test_send_after_close_raises_on_both_sides() -> None:
    client, server = memory_pair()
    await client.aclose()
    with pytest.raises(TransportClosed, match="transport closed"):
        await client.send(b"{}")
    with pytest.raises(TransportClosed, match="transport closed"):
        await client.receive()
    with pytest.raises(TransportClosed, match="peer closed"):
        await server.send(b"{}")
    await server.aclose()


async def test_aclose_is_idempotent() -> None:
    client, server = memory_pair()
    for _ in range(2):
        await client.aclose()
        await server.aclose()


async def test_full_buffer_applies_backpressure_until_peer_closes() -> None:
    client, server = memory_pair(max_buffer=1)
    async with client:
        await client.send(b"1")
        with anyio.move_on_after(0.05) as scope:
            await client.send(b"2")
        assert scope.cancelled_caught
        with anyio.fail_after(1):
            async with anyio.create_task_group() as tg:
                tg.start_soon(server.aclose)
                with pytest.raises(TransportClosed, match="peer closed"):
                    await client.send(b"2")
