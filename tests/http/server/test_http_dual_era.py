"""basic/versioning.mdx (dual-era server) and basic/transports/streamable-http.mdx §Backward
Compatibility: ONE mcpbind server process (real uvicorn on 127.0.0.1) serves a handshake-era
client (2025-11-25: initialize, session, GET stream) and a 2026-07-28 client (stateless,
subscriptions/listen) at the same time, each seeing its own era's behaviour."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.live_server import free_port, listening_process

from mcpbind import Client
from mcpbind.client import ClientHandlers
from mcpbind.http.client import StreamableHTTPTransport

pytestmark = pytest.mark.anyio

SCRIPT = Path(__file__).with_name("_dual_server.py")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    args = [sys.executable, str(SCRIPT), str(port)]
    with listening_process(args, port, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
        yield f"http://127.0.0.1:{port}/mcp"


class Seen:
    def __init__(self) -> None:
        self.methods: list[str] = []
        self.event = anyio.Event()

    async def __call__(self, method: str, params: Any) -> None:
        self.methods.append(method)
        if method == "notifications/tools/list_changed":
            self.event.set()


async def test_one_process_serves_both_eras_at_once(url: str) -> None:
    """versioning.mdx: the first request tells the era; both clients use the same endpoint
    concurrently with the same application calls, and both get list_changed for one change
    (old era: on its session's GET stream; 2026-07-28: on its subscriptions/listen stream)."""
    old_seen, new_seen = Seen(), Seen()
    async with (
        StreamableHTTPTransport(url) as old_wire,
        StreamableHTTPTransport(url) as new_wire,
        Client(
            old_wire,
            protocol_version="2025-11-25",
            handlers=ClientHandlers(notification=old_seen),
        ) as old,
        Client(
            new_wire,
            protocol_version="2026-07-28",
            handlers=ClientHandlers(notification=new_seen),
        ) as new,
    ):
        assert old.era == "handshake" and old.protocol_version == "2025-11-25"
        assert new.era == "stateless" and new.protocol_version == "2026-07-28"
        results: dict[str, str] = {}

        async def use(client: Client, key: str) -> None:
            for i in range(5):
                echoed = await client.call("echo", {"text": f"{key}-{i}"})
                assert echoed.content[0].text == f"{key}-{i}"  # type: ignore[union-attr]
            done = await client.call("chatty", {"n": 3})
            results[key] = done.content[0].text  # type: ignore[union-attr]

        async with anyio.create_task_group() as tg:
            tg.start_soon(use, old, "old")
            tg.start_soon(use, new, "new")
        assert results == {"old": "sent 3", "new": "sent 3"}

        await old.listen(tools_list_changed=True)
        subscription = await new.listen(tools_list_changed=True)
        await new.call("add_tool", {"name": "late_tool"})
        with anyio.fail_after(10):
            await old_seen.event.wait()
            await new_seen.event.wait()
        names_old = [tool.name async for tool in old.iter_tools()]
        names_new = [tool.name async for tool in new.iter_tools()]
        assert "late_tool" in names_old and "late_tool" in names_new
        await subscription.close()
