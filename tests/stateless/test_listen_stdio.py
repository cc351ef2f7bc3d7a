"""basic/patterns/subscriptions.mdx on stdio (basic/transports/stdio.mdx): subscriptions share
the one channel, each acknowledged first and demultiplexed by
``io.modelcontextprotocol/subscriptionId``; ``notifications/cancelled`` naming a listen
request ends that subscription only."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpbind.transports import StdioClientTransport

from .helpers import META

pytestmark = pytest.mark.anyio

APP = str(Path(__file__).with_name("listen_stdio_app.py"))
SUB_ID = "io.modelcontextprotocol/subscriptionId"


async def test_listen_over_stdio() -> None:
    """§Acknowledgment (per subscription id on stdio), §Receiving Notifications (tagged),
    §Multiple Concurrent Subscriptions, §Cancellation (notifications/cancelled on stdio)."""
    async with StdioClientTransport.spawn(sys.executable, [APP]) as wire:

        async def send(message: dict[str, Any]) -> None:
            await wire.send(json.dumps(message).encode())

        async def request(rid: int, method: str, params: dict[str, Any]) -> None:
            await send(
                {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": META}}
            )

        async def take(count: int) -> list[dict[str, Any]]:
            out = []
            with anyio.fail_after(10):
                for _ in range(count):
                    out.append(json.loads(await wire.receive()))
            return out

        await request(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        await request(
            2, "subscriptions/listen", {"notifications": {"resourceSubscriptions": ["test://a"]}}
        )
        acks = await take(2)
        assert {a["params"]["_meta"][SUB_ID] for a in acks} == {1, 2}
        assert all(a["method"] == "notifications/subscriptions/acknowledged" for a in acks)
        await request(3, "tools/call", {"name": "add_tool", "arguments": {"name": "x"}})
        await request(4, "tools/call", {"name": "touch", "arguments": {"uri": "test://a"}})
        got = await take(4)
        notes = {m["method"]: m["params"]["_meta"][SUB_ID] for m in got if "method" in m}
        assert notes == {
            "notifications/tools/list_changed": 1,
            "notifications/resources/updated": 2,
        }
        assert sorted(m["id"] for m in got if "id" in m) == [3, 4]
        await send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        )
        await request(5, "tools/call", {"name": "add_tool", "arguments": {"name": "y"}})
        await request(6, "tools/call", {"name": "touch", "arguments": {"uri": "test://a"}})
        rest = await take(3)
        assert [m.get("method") for m in rest if "method" in m] == [
            "notifications/resources/updated"
        ]
        assert sorted(m["id"] for m in rest if "id" in m) == [5, 6]
