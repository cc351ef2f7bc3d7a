"""server/discover.mdx: supported versions, capabilities and identity, before anything else."""

from __future__ import annotations

import pytest

from mcpbind import types as t

from .helpers import SERVER_INFO, VERSION, check_2026, client, raw, v26

pytestmark = pytest.mark.anyio


async def test_discover_result(transport: str) -> None:
    """server/discover.mdx §Response: versions, capabilities, serverInfo in _meta, instructions,
    caching hints (caching.mdx lists server/discover as cacheable)."""
    async with raw(transport) as wire:
        result = await wire.result("server/discover")
    check_2026(v26.DiscoverResult, result)
    assert result["resultType"] == "complete"
    assert result["supportedVersions"][0] == VERSION
    assert "2025-11-25" in result["supportedVersions"]  # a dual-era server names both eras
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts"}
    assert result["_meta"][SERVER_INFO] == {"name": "stateless-app", "version": "2.0.0"}
    assert result["instructions"] == "Test server."
    assert result["ttlMs"] == 300_000 and result["cacheScope"] == "public"


async def test_discover_on_modern_only_server(transport: str) -> None:
    """server/discover.mdx §DiscoverResult: a 2026-only server lists only 2026-07-28."""
    async with raw(transport, "modern") as wire:
        result = await wire.result("server/discover")
    assert result["supportedVersions"] == [VERSION]


@pytest.mark.memory_only
async def test_discover_advertises_list_changed_with_listen() -> None:
    """server/discover.mdx §Response, capabilities: listChanged/subscribe promise notifications
    on subscriptions/listen streams (basic/patterns/subscriptions.mdx), which this server
    offers, so both eras advertise the same capabilities."""
    async with raw("memory") as wire:
        result = await wire.result("server/discover")
        legacy = await wire.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "0"},
            },
            meta=None,
        )
    assert result["capabilities"]["tools"] == {"listChanged": True}
    assert result["capabilities"]["resources"] == {"listChanged": True, "subscribe": True}
    assert legacy["result"]["capabilities"]["tools"] == {"listChanged": True}


async def test_client_probe_fills_server_details(transport: str) -> None:
    """server/discover.mdx §When to Call (stdio probe): the client learns identity,
    capabilities and instructions from one discover result and stays in the modern era."""
    async with client(transport, protocol_version="auto") as c:
        assert c.era == "stateless"
        assert c.protocol_version == VERSION
        assert c.server_info == t.Implementation(name="stateless-app", version="2.0.0")
        assert c.instructions == "Test server."
        assert c.server_capabilities is not None
        assert c.server_capabilities.tools == t.ServerCapabilitiesTools(list_changed=True)
        assert c.peer_has_capability(("prompts",))


async def test_ping_becomes_discover(transport: str) -> None:
    """basic/versioning.mdx (no ping in 2026-07-28): ``client.ping()`` still answers whether the
    server is there, through server/discover, so application code does not change."""
    async with client(transport, protocol_version=VERSION) as c:
        assert await c.ping() == {}
