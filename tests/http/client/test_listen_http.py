"""2026-07-28 basic/patterns/subscriptions.mdx over Streamable HTTP: the client opts in with
``subscriptions/listen``, reads the acknowledgment, delivers the tagged notifications to the
application's handler and cancels by closing the stream; against the scripted mock, the
official SDK's 2026-07-28 server and mcpbind's server."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpbind import Client, ClientHandlers, types

from ._support import Running, server

SUB_ID = "io.modelcontextprotocol/subscriptionId"


def test_listen_acknowledges_delivers_and_closes(mock: Running) -> None:
    """§Acknowledgment, §Receiving Notifications, §Cancellation (HTTP: close the stream, no
    notifications/cancelled POST)."""
    got: list[tuple[str, Any]] = []
    changed = anyio.Event()

    async def note(method: str, params: Any) -> None:
        got.append((method, params))
        if method == "notifications/tools/list_changed":
            changed.set()

    async def go() -> Any:
        handlers = ClientHandlers(notification=note)
        async with Client(mock.url, protocol_version="auto", handlers=handlers) as client:
            with anyio.fail_after(10):
                sub = await client.listen(tools_list_changed=True, prompts_list_changed=True)
                await changed.wait()
                await sub.close()
            return sub

    mock.clear()
    sub = anyio.run(go)
    listen = mock.requests("subscriptions/listen")
    assert len(listen) == 1
    body = listen[0]["body"]
    assert body["params"]["notifications"] == {"promptsListChanged": True, "toolsListChanged": True}
    assert listen[0]["headers"]["mcp-method"] == "subscriptions/listen"
    assert sub.id == body["id"]
    assert sub.acknowledged == types.SubscriptionFilter(tools_list_changed=True)  # the subset
    assert not sub.active and sub.error is None
    methods = [m for m, _ in got]
    assert methods[:2] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ]
    assert got[1][1].meta[SUB_ID] == sub.id
    assert {"listen_closed": sub.id} in mock.log()  # the server saw the stream close
    assert mock.requests("notifications/cancelled") == []


@pytest.mark.parametrize("kind", ["official", "mcpbind"])
def test_listen_against_real_servers(kind: str) -> None:
    """§Opening a Stream / §Acknowledgment against the official SDK's and mcpbind's 2026-07-28
    HTTP servers: the agreed filter comes back and closing ends the subscription cleanly."""

    async def go(url: str) -> Any:
        async with Client(url, protocol_version="auto") as client:
            with anyio.fail_after(15):
                sub = await client.listen(tools_list_changed=True, resource_uris=["mem://greeting"])
                await sub.close()
            assert client.era == "stateless"
            return sub

    with server(kind) as running:
        sub = anyio.run(go, running.url)
    assert sub.acknowledged is not None
    assert sub.acknowledged.resource_subscriptions == ["mem://greeting"]
    assert isinstance(sub.id, int) and sub.error is None and not sub.active
