"""2026-07-28 basic/patterns/subscriptions.mdx on in-memory and stdio connections to an
mcpbind server (subscription ids correlate on the shared channel), and ``Client.listen`` on
the handshake era, where it maps to ``resources/subscribe``."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpbind import ClientHandlers

from .helpers import client

pytestmark = pytest.mark.anyio


async def test_listen_on_a_shared_channel(transport: str) -> None:
    """§Acknowledgment and §Cancellation (stdio: notifications/cancelled): the acknowledged
    subscription's id is its request id; two subscriptions get distinct ids; closing one
    leaves the connection usable."""
    seen: list[tuple[str, Any]] = []

    async def note(method: str, params: Any) -> None:
        seen.append((method, params))

    handlers = ClientHandlers(notification=note)
    async with client(transport, "dual", protocol_version="auto", handlers=handlers) as c:
        assert c.era == "stateless"
        with anyio.fail_after(10):
            first = await c.listen(tools_list_changed=True)
            second = await c.listen(prompts_list_changed=True)
            assert first.id is not None and second.id is not None and first.id != second.id
            assert first.acknowledged is not None and first.acknowledged.tools_list_changed
            await first.close()
            assert not first.active and second.active
            tools = await c.list_tools()
            await second.close()
    assert tools.tools
    acks = [
        p.meta["io.modelcontextprotocol/subscriptionId"]
        for m, p in seen
        if m.endswith("acknowledged")
    ]
    assert acks == [first.id, second.id]


@pytest.mark.memory_only
async def test_listen_on_the_handshake_era_subscribes_resources(transport: str) -> None:
    """Handshake era (2025-11-25 resources.mdx §Subscriptions): ``listen(resource_uris=...)``
    sends resources/subscribe, and ``close()`` resources/unsubscribe."""
    async with client(transport, "dual", protocol_version="2025-11-25") as c:
        assert c.era == "handshake"
        if not c.peer_has_capability(("resources", "subscribe")):
            pytest.skip("the test app does not offer resource subscriptions")
        sub = await c.listen(resource_uris=["mem://greeting"])
        assert sub.acknowledged is not None
        assert sub.acknowledged.resource_subscriptions == ["mem://greeting"]
        with anyio.fail_after(10):
            await sub.close()
        assert not sub.active and sub.error is None
