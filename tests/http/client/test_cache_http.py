"""2026-07-28 server/utilities/caching.mdx over Streamable HTTP: a list result is reused while
its ttlMs says it is fresh, ttlMs 0 is never reused, ``cache=False`` opts out, and a
list_changed notification drops the entry."""

from __future__ import annotations

import anyio

from mcpbind import Client, ClientHandlers

from ._support import Running


def test_ttl_is_honoured_and_zero_is_not_cached(served: Running) -> None:
    """caching.mdx: tools/list (ttlMs 60000) is fetched once; resources/list (ttlMs 0 on the
    official SDK's server, none on the scripted one) twice."""
    mock = served

    async def go() -> None:
        async with Client(mock.url, protocol_version="auto") as client:
            for _ in range(3):
                await client.list_tools()
            for _ in range(2):
                await client.list_resources()
            assert client.cache is not None and client.cache.hits == 2

    mock.clear()
    anyio.run(go)
    assert len(mock.requests("tools/list")) == 1
    assert len(mock.requests("resources/list")) == 2


def test_cache_opt_out(served: Running) -> None:
    """``Client(cache=False)``: every list goes to the server."""
    mock = served

    async def go() -> None:
        async with Client(mock.url, protocol_version="auto", cache=False) as client:
            await client.list_tools()
            await client.list_tools()

    mock.clear()
    anyio.run(go)
    assert len(mock.requests("tools/list")) == 2


def test_list_changed_from_a_subscription_invalidates(mock: Running) -> None:
    """caching.mdx §Interaction with Notifications: tools/list_changed (delivered on the
    subscriptions/listen stream) makes the next tools/list go to the server."""
    seen = anyio.Event()

    async def note(method: str, params: object) -> None:
        if method == "notifications/tools/list_changed":
            seen.set()

    async def go() -> None:
        handlers = ClientHandlers(notification=note)
        async with Client(mock.url, protocol_version="auto", handlers=handlers) as client:
            await client.list_tools()
            await client.list_tools()
            sub = await client.listen(tools_list_changed=True)
            with anyio.fail_after(10):
                await seen.wait()
            await client.list_tools()
            await sub.close()

    mock.clear()
    anyio.run(go)
    assert len(mock.requests("tools/list")) == 2
