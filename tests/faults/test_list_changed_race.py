"""Found by the soak benchmark (issue 16): a debounced ``list_changed`` notification whose
session's transport closed meanwhile (an HTTP DELETE) raised ConnectionClosed inside the
session's task group, which logged "session ... failed" and tore the session down with an
error. A peer that is gone simply gets no notification."""

from __future__ import annotations

import anyio
import pytest

from mcpbind import LATEST_HANDSHAKE, Client, Server
from mcpbind.server.session import ServerSession
from mcpbind.transports import TransportClosed, memory_pair

pytestmark = pytest.mark.anyio


class ClosingTransport:
    """The server's end: sends fail once ``gone`` is set, while reads still wait."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.gone = False

    async def send(self, data: bytes) -> None:
        if self.gone:
            raise TransportClosed("session terminated")
        await self.inner.send(data)  # type: ignore[attr-defined]

    async def receive(self) -> bytes:
        data: bytes = await self.inner.receive()  # type: ignore[attr-defined]
        return data

    async def aclose(self) -> None:
        await self.inner.aclose()  # type: ignore[attr-defined]


async def test_list_changed_after_the_peer_left_is_dropped_quietly() -> None:
    server = Server("race")

    @server.tool()
    def one() -> str:
        return "1"

    client_end, server_end = memory_pair()
    wire = ClosingTransport(server_end)
    session = ServerSession(server, wire, debounce=0.05)  # type: ignore[arg-type]
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        async with Client(client_end, protocol_version=LATEST_HANDSHAKE) as client:
            assert await client.ping() is not None
            wire.gone = True
            server.tool("two")(lambda: "2")  # the flush runs in 50 ms, into a closed wire
            await anyio.sleep(0.3)
            assert not session.connection.closed  # the session did not crash
        tg.cancel_scope.cancel()
