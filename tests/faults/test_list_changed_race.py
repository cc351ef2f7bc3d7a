"""Found by the soak benchmark (issue 16): a debounced ``list_changed`` notification whose
session's transport closed meanwhile (an HTTP DELETE) raised ConnectionClosed inside the
session's task group, which logged "session ... failed" and tore the session down with an
error. A peer that is gone simply gets no notification.

Second find: a change announced while a session was closing (its task group done, its
transport still closing) raised ``RuntimeError: This task group is not active`` out of
``Server.tool()``/``resource_updated()`` into the caller, and the sessions after it never
heard of the change. The soak server's ticker died of it, every stream went quiet, and the
30-minute run's slow readers never reached their deadline."""

from __future__ import annotations

import anyio
import pytest

from mcpbind import LATEST_HANDSHAKE, Client, Server
from mcpbind.client import ClientHandlers
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


class SlowClosingTransport(ClosingTransport):
    """The server's end of a session whose closing takes a while (an HTTP session's does I/O)."""

    def __init__(self, inner: object) -> None:
        super().__init__(inner)
        self.closing = anyio.Event()
        self.release = anyio.Event()

    async def aclose(self) -> None:
        self.closing.set()
        await self.release.wait()
        await super().aclose()


async def test_a_change_while_a_session_closes_reaches_the_other_sessions() -> None:
    server = Server("race")

    @server.tool()
    def one() -> str:
        return "1"

    heard: list[str] = []
    changed = anyio.Event()

    async def note(method: str, params: object) -> None:
        heard.append(method)
        changed.set()

    closing_end, closing_server_end = memory_pair()
    wire = SlowClosingTransport(closing_server_end)
    closing = ServerSession(server, wire)  # type: ignore[arg-type]
    live_end, live_server_end = memory_pair()
    live = ServerSession(server, live_server_end)
    async with anyio.create_task_group() as tg:
        tg.start_soon(closing.run)  # registered first: its listener is called first
        tg.start_soon(live.run)
        handlers = ClientHandlers(notification=note)
        try:
            async with Client(live_end, protocol_version=LATEST_HANDSHAKE, handlers=handlers) as c:
                async with Client(closing_end, protocol_version=LATEST_HANDSHAKE) as leaving:
                    assert await leaving.ping() is not None
                with anyio.fail_after(5):
                    await wire.closing.wait()  # its task group is done, its transport closing
                server.tool("two")(lambda: "2")  # raised RuntimeError here
                server.resource_updated("any://thing")
                with anyio.fail_after(5):
                    await changed.wait()
                assert heard == ["notifications/tools/list_changed"]
                assert [tool.name for tool in (await c.list_tools()).tools] == ["one", "two"]
        finally:
            wire.release.set()
            tg.cancel_scope.cancel()
