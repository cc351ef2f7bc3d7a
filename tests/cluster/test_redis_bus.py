"""The notification bus: ``tools/list_changed`` and ``resources/updated`` raised on one worker
reach the clients subscribed on another, on both eras: a 2025-11-25 session's ``GET`` stream
(server/resources.mdx, Subscriptions; server/tools.mdx, List Changed Notification) and a
2026-07-28 ``subscriptions/listen`` stream (basic/patterns/subscriptions.mdx)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpbind import Client, ClientHandlers
from mcpbind.http.server.redis_bus import RedisNotificationBus

from .app import build
from .processes import workers

pytestmark = pytest.mark.anyio

WANTED = {"notifications/tools/list_changed", "notifications/resources/updated"}


class Inbox:
    """The notifications one client received, and a way to wait for some."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self.arrived = anyio.Event()

    async def note(self, method: str, params: Any) -> None:
        self.methods.append(method)
        if set(self.methods) >= WANTED:
            self.arrived.set()


async def test_changes_on_one_worker_reach_both_eras_on_another(redis_url: str) -> None:
    with workers(2, options={"redis_bus": redis_url}) as (w0, w1):
        here, there = f"http://127.0.0.1:{w0}/mcp", f"http://127.0.0.1:{w1}/mcp"
        old, new = Inbox(), Inbox()
        async with (
            Client(
                there, protocol_version="2025-11-25", handlers=ClientHandlers(notification=old.note)
            ) as c25,
            Client(
                there, protocol_version="2026-07-28", handlers=ClientHandlers(notification=new.note)
            ) as c26,
            Client(here, protocol_version="2026-07-28") as actor,
        ):
            with anyio.fail_after(10):
                await c25.listen(resource_uris=["mem://note"])
                await c26.listen(tools_list_changed=True, resource_uris=["mem://note"])
                await anyio.sleep(0.3)  # the 2025 client's GET stream opens after initialize
                assert (await actor.call("flip", {})).structured_content is not None
                await actor.call("touch", {"uri": "mem://note"})
                await old.arrived.wait()
                await new.arrived.wait()
    assert set(old.methods) >= WANTED and set(new.methods) >= WANTED


async def test_a_worker_ignores_its_own_and_malformed_messages(redis_url: str) -> None:
    """Pub/sub hands a worker its own publications too: they are not replayed (the local
    listeners heard them already), nor is anything that is not a change."""
    server = build()
    heard: list[tuple[str, str | None]] = []
    relayed = anyio.Event()

    def hear(what: str, uri: str | None) -> None:
        heard.append((what, uri))
        if uri == "mem://b":
            relayed.set()

    server.on_change(hear)
    bus = RedisNotificationBus(server, redis_url, prefix="own-test")
    other = RedisNotificationBus(build(), redis_url, prefix="own-test")
    await bus.start()
    await other.start()
    try:
        server.resource_updated("mem://a")  # published, comes back, ignored
        other.server.resource_updated("mem://b")  # another worker's: replayed here
        import redis.asyncio

        raw = redis.asyncio.Redis.from_url(redis_url)
        await raw.publish(bus.channel, b"not json")
        await raw.publish(bus.channel, b'{"o": "x", "w": "shutdown", "u": null}')
        await raw.aclose()
        with anyio.fail_after(5):
            await relayed.wait()
        await anyio.sleep(0.2)  # room for anything that should not come
    finally:
        await bus.aclose()
        await other.aclose()
    assert heard == [("updated", "mem://a"), ("updated", "mem://b")]
