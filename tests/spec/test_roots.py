"""client/roots.mdx (2024-11-05, 2025-03-26, 2025-11-25): the server lists the client's roots
with ``roots/list``; the client announces changes with notifications/roots/list_changed."""

from __future__ import annotations

import anyio
import pytest

from mcpbind import LATEST_HANDSHAKE, Client, ClientHandlers, json_value
from mcpbind import types as t
from mcpbind.protocol import LocalProtocolError
from mcpbind.server import ServerSession
from mcpbind.transports import memory_pair

from .conftest import Connect
from .helpers import memory_session, text_of
from .servers import build

pytestmark = pytest.mark.anyio

ROOTS = [t.Root(uri="file:///project", name="project"), t.Root(uri="file:///lib")]


async def test_server_lists_the_client_roots(connect: Connect) -> None:
    """roots.mdx §Listing Roots / §Root: the server's roots/list returns the client's roots;
    after set_roots (notifications/roots/list_changed, §Root List Changes) a new listing
    returns the new ones."""
    async with connect("full", handlers=ClientHandlers(roots=ROOTS)) as client:
        first = await client.call("list_roots")
        await client.set_roots([t.Root(uri="file:///other")])
        second = await client.call("list_roots")
    assert json_value(first.structured_content) == {"result": ["file:///project", "file:///lib"]}
    assert json_value(second.structured_content) == {"result": ["file:///other"]}


@pytest.mark.memory_only
async def test_list_changed_reaches_the_server() -> None:
    """roots.mdx §Capabilities (``listChanged``) / §Root List Changes: the client sends
    notifications/roots/list_changed when its roots change."""
    handlers = ClientHandlers(roots=ROOTS)
    async with memory_session("full", handlers=handlers) as (client, session, wire):
        await client.set_roots(ROOTS[:1])
        await client.ping()
    assert "notifications/roots/list_changed" in wire.received_methods()
    assert session.core.peer_capabilities == {"roots": {"listChanged": True}}


@pytest.mark.memory_only
async def test_roots_refused_without_the_capability(connect: Connect) -> None:
    """roots.mdx §Capabilities: "Clients that support roots MUST declare the roots capability";
    otherwise the server refuses locally and the tool reports it; and a client without roots
    cannot announce a change."""
    async with connect("full") as client:
        result = await client.call("list_roots")
        assert result.is_error is True
        assert "roots" in text_of(result)
        with pytest.raises(LocalProtocolError, match="roots"):
            await client.set_roots(ROOTS)


@pytest.mark.memory_only
async def test_server_application_sees_roots_list_changed() -> None:
    """roots.mdx §Root List Changes: the notification exists so that the server re-lists the
    roots -- the server application must be able to observe it."""
    server = build("full")
    seen = anyio.Event()

    @server.notification("notifications/roots/list_changed")
    async def on_roots_changed(params: object, ctx: object) -> None:
        seen.set()

    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(ServerSession(server, server_end).run)
        handlers = ClientHandlers(roots=ROOTS)
        async with Client(
            client_end, handlers=handlers, protocol_version=LATEST_HANDSHAKE
        ) as client:
            await client.set_roots(ROOTS[:1])
            with anyio.fail_after(0.5):
                await seen.wait()
