"""The 2024-11-05 HTTP+SSE client transport and the automatic fallback to it.

Spec: 2024-11-05 basic/transports.mdx §HTTP with SSE; 2025-11-25 basic/transports.mdx
§Backwards Compatibility. The legacy server is the official SDK's ``sse_app()`` under
uvicorn.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import anyio
import pytest

from mcpbind import Client, ConnectionClosed, McpError, types
from mcpbind.http.client import StreamableHTTPTransport
from mcpbind.http.client.legacy_sse_transport import LegacySSETransport

from ._support import Running, server

pytestmark = pytest.mark.anyio
#: The handshake era these tests are about (the client default, "auto", may pick 2026-07-28).
ERA = "2025-11-25"


@pytest.fixture(scope="module")
def legacy() -> Iterator[Running]:
    with server("official-legacy") as running:
        yield running


async def test_fallback_from_streamable_http(legacy: Running) -> None:
    """§Backwards Compatibility: the initialize POST fails with 405, so the client GETs
    the URL, receives an ``endpoint`` event and uses the old transport for everything."""
    async with Client(legacy.base + "/sse", protocol_version=ERA) as client:
        transport = client.connection.transport  # type: ignore[union-attr]
        assert isinstance(transport, StreamableHTTPTransport)
        assert transport.legacy is not None
        assert transport.legacy.endpoint is not None
        assert transport.legacy.endpoint.startswith(legacy.base + "/messages/")
        assert client.server_info is not None
        assert client.server_info.name == "interop-official"
        tools = await client.list_tools()
        assert {t.name for t in tools.tools} >= {"add", "echo"}
        result = await client.call("add", {"a": 2, "b": 3})
        block = result.content[0]
        assert isinstance(block, types.TextContent) and block.text == "5"
        read = await client.read_resource(types.ReadResourceRequestParams(uri="mem://greeting"))
        content = read.contents[0]
        assert isinstance(content, types.TextResourceContents)
        assert content.text == "Hello from interop!"


async def test_legacy_transport_directly(legacy: Running) -> None:
    """§HTTP with SSE: messages are POSTed to the endpoint; answers arrive as ``message``
    events on the stream."""
    async with (
        LegacySSETransport(legacy.base + "/sse") as transport,
        Client(transport, protocol_version="2024-11-05") as client,
    ):
        assert client.protocol_version == "2024-11-05"
        prompt = await client.get_prompt(
            types.GetPromptRequestParams(name="hello", arguments={"name": "Ada"})
        )
        message = prompt.messages[0].content
        assert isinstance(message, types.TextContent) and "Ada" in message.text


async def test_no_fallback_when_get_is_not_an_sse_stream(legacy: Running) -> None:
    """§Backwards Compatibility: only an SSE stream with an ``endpoint`` event means an
    old server; otherwise the initialize error itself is what the caller sees."""
    with anyio.fail_after(10), pytest.raises(McpError, match="HTTP 404"):
        async with Client(legacy.base + "/nothing-here", protocol_version=ERA, timeout=10):
            pass


async def test_killed_legacy_server_closes_the_connection_fast() -> None:
    """The stream ending is the end of the transport: the connection closes (which fails
    every pending call) within a second, and later calls fail with ConnectionClosed. (The
    legacy server here is fault_server.py's ``/legacy``: it starts faster than the SDK's.)

    Spec: 2024-11-05 basic/transports.mdx §HTTP with SSE.
    """
    with server("fault") as srv:
        async with Client(srv.base + "/legacy", protocol_version=ERA, timeout=30) as client:
            transport = client.connection.transport  # type: ignore[union-attr]
            assert isinstance(transport, StreamableHTTPTransport) and transport.legacy
            assert client.protocol_version == "2024-11-05"
            await client.list_tools()
            connection = client.connection
            assert connection is not None
            killed_at = time.monotonic()
            srv.kill()
            with anyio.fail_after(10):  # promptly (the timeout is 30 s): a loaded-machine margin
                await connection.wait_closed()
            assert time.monotonic() - killed_at < 10.0
            with pytest.raises(ConnectionClosed):
                await client.call("add", {"a": 1, "b": 1})
