"""server/utilities/caching.mdx: ttlMs/cacheScope on cacheable results, deterministic lists
(server/tools.mdx §Listing Tools), and the client's cache honouring them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpbind import Client, ClientHandlers, Server
from mcpbind import types as t
from mcpbind.client.cache import ResultCache
from mcpbind.server import ServerSession
from mcpbind.server.options import CacheHint
from mcpbind.transports import memory_pair

from .app import build, ttl_options
from .helpers import Recorder, raw

pytestmark = pytest.mark.anyio

CACHEABLE = [
    ("tools/list", {}),
    ("prompts/list", {}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("resources/read", {"uri": "mem://greeting"}),
]


async def test_hints_on_cacheable_results(transport: str) -> None:
    """caching.mdx §Cacheable Results: ttlMs (integer >= 0) and cacheScope on every one."""
    async with raw(transport) as wire:
        for method, params in CACHEABLE:
            result = await wire.result(method, params)
            assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0, method
            assert result["cacheScope"] in ("public", "private"), method
        called = await wire.result("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
    assert "ttlMs" not in called and "cacheScope" not in called


@pytest.mark.memory_only
async def test_hints_are_configurable() -> None:
    """caching.mdx §Cacheable Model: the server chooses ttlMs and cacheScope per result kind."""
    async with raw("memory", cache={"tools/list": CacheHint(5_000, "private")}) as wire:
        tools = await wire.result("tools/list")
        prompts = await wire.result("prompts/list")
    assert (tools["ttlMs"], tools["cacheScope"]) == (5_000, "private")
    assert (prompts["ttlMs"], prompts["cacheScope"]) == (0, "public")  # not configured: 0
    with pytest.raises(ValueError, match=">= 0"):
        CacheHint(-1)


async def test_deterministic_order_and_same_scope_on_every_page(transport: str) -> None:
    """server/tools.mdx §Listing Tools (deterministic order) and caching.mdx §Interaction with
    Pagination (the same cacheScope on every page): two full listings agree exactly."""
    async with raw(transport) as wire:
        listings = []
        for _ in range(2):
            names, scopes, cursor = [], set(), None
            while True:
                result = await wire.result("tools/list", {"cursor": cursor} if cursor else {})
                names += [tool["name"] for tool in result["tools"]]
                scopes.add(result["cacheScope"])
                cursor = result.get("nextCursor")
                if not cursor:
                    break
            assert len(scopes) == 1
            listings.append(names)
    assert listings[0] == listings[1]
    assert listings[0][-5:] == ["z_e", "z_d", "z_c", "z_b", "z_a"]  # registration order


@pytest.mark.memory_only
async def test_client_serves_fresh_results_from_cache() -> None:
    """caching.mdx §Freshness Calculation: within ttlMs the client reuses the result (no
    request); once stale it fetches again; each page and each uri is its own entry."""
    server = build(**ttl_options(60_000))
    now = [1000.0]
    async with _recorded(server) as (c, wire):
        assert c.cache is not None
        c.cache = ResultCache(clock=lambda: now[0])
        first = [tool.name async for tool in c.iter_tools()]
        pages = wire.count("tools/list")
        again = [tool.name async for tool in c.iter_tools()]
        assert again == first and wire.count("tools/list") == pages  # every page cached
        await c.read_resource(t.ReadResourceRequestParams(uri="mem://users/1"))
        await c.read_resource(t.ReadResourceRequestParams(uri="mem://users/2"))
        await c.read_resource(t.ReadResourceRequestParams(uri="mem://users/1"))
        assert wire.count("resources/read") == 2
        now[0] += 61  # past ttlMs
        [tool.name async for tool in c.iter_tools()]
        assert wire.count("tools/list") == 2 * pages


@pytest.mark.memory_only
async def test_zero_ttl_and_opt_out_are_not_cached() -> None:
    """caching.mdx §Time-to-Live: ttlMs 0 is immediately stale; ``cache=False`` opts out."""
    async with _recorded(build(**ttl_options(0))) as (c, wire):
        await c.list_prompts()
        await c.list_prompts()
        assert wire.count("prompts/list") == 2
    async with _recorded(build(**ttl_options(60_000)), cache=False) as (c, wire):
        assert c.cache is None
        await c.list_prompts()
        await c.list_prompts()
        assert wire.count("prompts/list") == 2


@pytest.mark.memory_only
async def test_mrtr_retries_are_not_cached() -> None:
    """caching.mdx §Cache Key: results of requests carrying inputResponses/requestState are
    never cached (here: resources/read of an MRTR resource with a long ttl)."""

    async def elicit(params: Any) -> t.ElicitResult:
        return t.ElicitResult(action="accept", content={"password": "sesame"})

    server = build(**ttl_options(60_000))
    async with _recorded(server, handlers=ClientHandlers(elicitation=elicit)) as (c, wire):
        for _ in range(2):
            result = await c.read_resource(t.ReadResourceRequestParams(uri="mem://secret"))
            assert isinstance(result.contents[0], t.TextResourceContents)
            assert result.contents[0].text == "opened"
        assert wire.count("resources/read") == 4  # two rounds each time, nothing reused


def test_cache_key_ignores_meta_and_notifications_invalidate() -> None:
    """caching.mdx §Cache Key and §Interaction with Notifications."""
    cache = ResultCache(clock=lambda: 0.0)
    result = t.ListToolsResult(tools=[], ttl_ms=1000)
    cache.put("tools/list", t.PaginatedRequestParams(meta={"a": 1}), result)
    assert cache.get("tools/list", t.PaginatedRequestParams()) is result
    assert cache.get("tools/list", t.PaginatedRequestParams(cursor="x")) is None
    assert cache.get("prompts/list", None) is None
    assert not ResultCache.cacheable(
        "resources/read", t.ReadResourceRequestParams(uri="u", request_state="s")
    )
    cache.invalidate(["tools/list"])
    assert len(cache) == 0
    cache.put("tools/list", None, t.ListToolsResult(tools=[], ttl_ms=-5))
    assert len(cache) == 0  # caching.mdx: a negative ttlMs counts as 0


class _Counter(Recorder):
    def count(self, method: str) -> int:
        return sum(1 for m in self.requests() if m["method"] == method)


@asynccontextmanager
async def _recorded(server: Server, **options: Any) -> AsyncIterator[tuple[Client, _Counter]]:
    """A 2026-07-28 client in memory, with a counter of the requests the server received."""
    client_end, server_end = memory_pair()
    wire = _Counter(server_end)
    session = ServerSession(server, wire)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        async with Client(client_end, protocol_version="2026-07-28", **options) as c:
            yield c, wire
        tg.cancel_scope.cancel()
