"""Sessionless Streamable HTTP (``StreamableHTTPApp(sessionless=True)``, 2025 revisions):
basic/transports.mdx §Session Management lets a server issue no session, and then nothing
reaches the client after its request's response. basic/lifecycle.mdx §Capability Negotiation:
advertise only what can be honoured -- no logging (a level set by ``logging/setLevel`` does
not outlive that request), no ``resources.subscribe``, no ``listChanged`` -- and refuse those
requests (-32601) instead of answering ``{}``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import msgspec
import pytest

from mcpbind import LATEST_HANDSHAKE, Client
from mcpbind import types as t
from mcpbind.http import StreamableHTTPApp
from mcpbind.protocol import METHOD_NOT_FOUND, LocalProtocolError

from ._support import LiveServer, headers, init_body, make_server, messages, sse_events


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def sessionless() -> Iterator[LiveServer]:
    server = LiveServer(StreamableHTTPApp(make_server(), sessionless=True)).start()
    try:
        yield server
    finally:
        server.stop()


def post(live: LiveServer, body: dict[str, Any], version: str | None = "2025-11-25") -> Any:
    with httpx2.Client(timeout=10) as client:
        r = client.post(live.url, json=body, headers=headers(version=version))
    (reply,) = messages(list(sse_events(iter(r.text.splitlines()))))
    return reply


def test_initialize_advertises_only_what_is_delivered(sessionless: LiveServer) -> None:
    """lifecycle.mdx §Capability Negotiation: tools, resources and prompts stay; logging,
    ``subscribe`` and ``listChanged`` are left out."""
    caps = post(sessionless, init_body(), version=None)["result"]["capabilities"]
    assert caps == {"tools": {}, "resources": {}, "prompts": {}}


@pytest.mark.parametrize(
    ("method", "params"),
    [("logging/setLevel", {"level": "debug"}), ("resources/subscribe", {"uri": "test://hello"})],
)
def test_undeliverable_requests_are_refused(
    sessionless: LiveServer, method: str, params: dict[str, Any]
) -> None:
    """logging.mdx §Capabilities and resources.mdx §Subscriptions: not declared, so -32601
    (no longer ``{}`` for a level or subscription that nothing honours)."""
    reply = post(sessionless, {"jsonrpc": "2.0", "id": 2, "method": method, "params": params})
    assert reply["error"]["code"] == METHOD_NOT_FOUND
    assert "not declared" in reply["error"]["message"]


@pytest.mark.anyio
async def test_client_sees_the_reduced_capabilities(sessionless: LiveServer) -> None:
    """The mcpbind client over the same app: calls work; ``set_level`` is refused locally as
    for any server without logging (logging.mdx §Capabilities)."""
    async with Client(sessionless.url, protocol_version=LATEST_HANDSHAKE) as client:
        assert client.server_capabilities is not None
        assert client.server_capabilities.logging is msgspec.UNSET
        echoed = await client.call("echo", {"text": "hi"})
        assert [c.text for c in echoed.content if isinstance(c, t.TextContent)] == ["hi"]
        with pytest.raises(LocalProtocolError, match="'logging'"):
            await client.set_level(t.SetLevelRequestParams(level="debug"))
