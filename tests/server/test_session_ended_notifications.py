"""A change notification whose session ends while it is being written is dropped quietly, not
raised from its task (2025-11-25 server/resources.mdx §Subscriptions: updates go to subscribed
sessions; a session that ended has none). Found by the cluster soak: the task logged a
traceback per ended session."""

from __future__ import annotations

import anyio
import msgspec
import pytest

from mcpbind import LATEST_HANDSHAKE, Server
from mcpbind.server.session import ServerSession
from mcpbind.transports import TransportClosed, memory_pair

pytestmark = pytest.mark.anyio


class _Closing:
    """A transport whose writes fail as a peer that went away makes them fail, once told."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.gone = False

    async def send(self, message: bytes) -> None:
        if self.gone:
            raise TransportClosed("peer gone")
        await self.inner.send(message)  # type: ignore[attr-defined]

    async def receive(self) -> bytes:
        return await self.inner.receive()  # type: ignore[attr-defined,no-any-return]

    async def aclose(self) -> None:
        await self.inner.aclose()  # type: ignore[attr-defined]


async def test_a_resource_update_for_a_session_that_ended_is_dropped() -> None:
    client_end, server_end = memory_pair()
    transport = _Closing(server_end)
    server = Server("s", "1")

    @server.resource("notes://a")
    def note() -> str:
        return "a"

    session = ServerSession(server, transport)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LATEST_HANDSHAKE,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
        await client_end.send(msgspec.json.encode(init))
        with anyio.fail_after(10):
            assert b'"result"' in await client_end.receive()
        session.subscriptions.add("notes://a")
        transport.gone = True
        await session.notify_resource_updated("notes://a")  # no ConnectionClosed out of it
        await client_end.aclose()
        tg.cancel_scope.cancel()
