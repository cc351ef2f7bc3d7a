"""``Client``'s default era and ``refresh_lists`` on 2026-07-28.

basic/versioning.mdx: the default client ("auto") reaches a server that speaks both eras on
2026-07-28. basic/patterns/subscriptions.mdx: on that era list changes arrive only on a
``subscriptions/listen`` stream, so a client keeping the lists (``refresh_lists``) opens one,
and its lists follow the server's changes as they do on the handshake era.
"""

from __future__ import annotations

import anyio
import pytest

from mcpbind import LATEST_HANDSHAKE, LATEST_STATELESS, Client, Server

pytestmark = pytest.mark.anyio


def growing_server() -> Server:
    server = Server("growing", page_size=1)

    @server.tool()
    def first() -> str:
        return "1"

    @server.tool()
    async def add_tool(name: str) -> None:  # on the event loop: it changes the server
        server.tool(name=name)(lambda: "new")

    return server


async def wait_for_tools(client: Client, count: int) -> list[str]:
    with anyio.fail_after(5):
        while len(client.tools or []) < count:  # noqa: ASYNC110 - the refresh has no event
            await anyio.sleep(0.01)
    return [tool.name for tool in client.tools or []]


async def test_default_client_negotiates_the_stateless_era() -> None:
    """versioning.mdx: with no ``protocol_version`` the client probes and picks 2026-07-28."""
    async with Client(growing_server()) as client:
        assert (client.era, client.protocol_version) == ("stateless", LATEST_STATELESS)
        assert client.lists_subscription is None  # nothing asked for without refresh_lists


async def test_refresh_lists_listens_on_the_stateless_era() -> None:
    """subscriptions.mdx §Opening a Stream: the kept lists are followed through a listen
    stream the server acknowledged, then refreshed (every page) after a change."""
    async with Client(growing_server(), refresh_lists=True) as client:
        assert client.era == "stateless"
        sub = client.lists_subscription
        assert sub is not None and sub.active and sub.id is not None
        assert sub.acknowledged is not None and sub.acknowledged.tools_list_changed is True
        assert [tool.name for tool in client.tools or []] == ["first", "add_tool"]
        await client.call("add_tool", {"name": "second"})
        assert await wait_for_tools(client, 3) == ["first", "add_tool", "second"]
    assert not sub.active  # the stream ends with the client


async def test_refresh_lists_on_the_handshake_era_needs_no_listen() -> None:
    """lifecycle.mdx (2025-11-25): list_changed arrives unasked, so no subscription is made."""
    async with Client(growing_server(), refresh_lists=True, protocol_version=LATEST_HANDSHAKE) as c:
        assert c.era == "handshake" and c.lists_subscription is None
        await c.call("add_tool", {"name": "second"})
        assert await wait_for_tools(c, 3) == ["first", "add_tool", "second"]
