"""The lists a server pages through are built once per change, not once per page (issue 15:
listing N tools in pages must cost O(N) in all). What the client sees must still follow every
registration, removal and replacement at once.

Spec: server/utilities/pagination.mdx (every page of the current list, in order) and
server/tools.mdx §List Changed Notification (the list a client fetches reflects changes).
"""

from __future__ import annotations

import pytest

from mcpbind import Client, Server

pytestmark = pytest.mark.anyio


def _server(count: int) -> Server:
    server = Server("listing", version="1.0.0")
    server.page_size = 3

    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    for i in range(count):
        server.tool(f"tool{i:02d}")(lookup)
    return server


async def _names(client: Client) -> list[str]:
    return [tool.name async for tool in client.iter_tools()]


async def test_pages_follow_registrations_removals_and_replacements() -> None:
    server = _server(7)
    async with Client(server, cache=False) as client:
        assert await _names(client) == [f"tool{i:02d}" for i in range(7)]

        def extra(key: str) -> str:
            """Added later."""
            return key

        server.tool("tool07")(extra)
        assert (await _names(client))[-1] == "tool07"
        server.remove_tool("tool00")
        assert await _names(client) == [f"tool{i:02d}" for i in range(1, 8)]

        def replaced(key: str) -> str:
            """Replaced."""
            return key

        server.tool("tool03")(replaced)
        tools = {tool.name: tool async for tool in client.iter_tools()}
        assert tools["tool03"].description == "Replaced."


async def test_the_listed_items_are_built_once_per_change() -> None:
    server = _server(7)
    async with Client(server, cache=False) as client:
        await _names(client)
        first = server._lists["tools"]
        await _names(client)  # three pages again: the same list, not rebuilt per page
        assert server._lists["tools"] is first
        server.remove_tool("tool01")
        await _names(client)
        assert server._lists["tools"] is not first


async def test_closed_sessions_stop_listening_for_changes() -> None:
    server = _server(1)
    for _ in range(3):
        async with Client(server, cache=False) as client:
            await _names(client)
            assert len(server._listeners) == 1
    assert not server._listeners
