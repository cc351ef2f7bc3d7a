"""mcpbind's legacy HTTP+SSE server endpoint (``mcpbind.http.LegacySSEApp``, here mounted
beside Streamable HTTP with ``with_legacy_sse``) against real clients: the official Python
SDK's ``mcp.client.sse.sse_client`` and mcpbind's own ``LegacySSETransport``.

Spec: 2024-11-05 basic/transports.mdx §HTTP with SSE (the ``endpoint`` event, POSTed
messages, ``message`` events, closing the SSE connection ends the session); 2025-03-26
basic/transports.mdx §Backwards Compatibility (a client falls back to it).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from support.live_server import LiveServer

from mcpbind import Client, ClientHandlers, Context, Server
from mcpbind import types as t
from mcpbind.http import StreamableHTTPApp, WithLegacySSE, with_legacy_sse
from mcpbind.http.client import StreamableHTTPTransport
from mcpbind.http.client.legacy_sse_transport import LegacySSETransport

_SKIP = "the official MCP SDK (`mcp`, the `peers` extra) is not installed"
mcp = pytest.importorskip("mcp", reason=_SKIP)
sse_client = pytest.importorskip("mcp.client.sse", reason=_SKIP).sse_client

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

TIMEOUT = 10.0


def build_server() -> Server:
    server = Server("legacy-sse-mcpbind", "1.0.0")

    @server.tool(description="Add two integers, reporting progress first")
    async def add(a: int, b: int, ctx: Context) -> int:
        await ctx.report_progress(1, 2, "halfway")
        await ctx.info(f"adding {a} and {b}")
        return a + b

    @server.tool(description="Echo")
    def echo(text: str) -> str:
        return text

    return server


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, WithLegacySSE]]:
    app = with_legacy_sse(StreamableHTTPApp(build_server(), path="/mcp"))
    live = LiveServer(app).start()
    try:
        yield f"http://127.0.0.1:{live.port}", app
    finally:
        live.stop()


async def _sessions_end(app: WithLegacySSE) -> None:
    with anyio.fail_after(TIMEOUT):
        while app.legacy.sessions:  # noqa: ASYNC110 - the session ends with the connection
            await anyio.sleep(0.02)


async def test_official_sse_client_calls_a_tool_and_gets_a_notification(
    served: tuple[str, WithLegacySSE],
) -> None:
    """The official SDK's 2024-11-05 client: endpoint event, initialize, tools/list, a
    tools/call whose progress notification arrives on the stream before its result, and
    closing the SSE connection ends the server's session."""
    base, app = served
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    with anyio.fail_after(TIMEOUT):
        async with (
            sse_client(base + "/sse") as (read, write),
            mcp.ClientSession(read, write, read_timeout_seconds=TIMEOUT) as session,
        ):
            init = await session.initialize()
            assert init.server_info.name == "legacy-sse-mcpbind"
            assert len(app.legacy.sessions) == 1
            tools = await session.list_tools()
            assert {tool.name for tool in tools.tools} == {"add", "echo"}
            result = await session.call_tool(
                "add", {"a": 2, "b": 40}, progress_callback=on_progress
            )
            assert not result.is_error
            assert result.content[0].text == "42"
            assert result.structured_content == {"result": 42}
            assert progress == [(1, 2, "halfway")]
            echoed = await session.call_tool("echo", {"text": "héllo"})
            assert echoed.content[0].text == "héllo"
    await _sessions_end(app)


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25"])
async def test_mcpbind_legacy_transport_talks_to_it(
    served: tuple[str, WithLegacySSE], version: str
) -> None:
    """mcpbind's own ``LegacySSETransport``: a tools/call with a log notification on the way
    (the client set the level), and the session ends when the transport closes."""
    base, app = served
    logs: list[Any] = []

    async def on_log(params: t.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    with anyio.fail_after(TIMEOUT):
        async with (
            LegacySSETransport(base + "/sse") as transport,
            Client(
                transport, protocol_version=version, handlers=ClientHandlers(logging=on_log)
            ) as client,
        ):
            assert client.protocol_version == version
            assert transport.endpoint is not None
            assert transport.endpoint.startswith(base + "/messages/?session_id=")
            await client.set_level(t.SetLevelRequestParams(level="info"))
            result = await client.call("add", {"a": 1, "b": 2})
            block = result.content[0]
            assert isinstance(block, t.TextContent) and block.text == "3"
            assert logs == ["adding 1 and 2"]
    await _sessions_end(app)


async def test_both_transports_side_by_side_and_the_fallback(
    served: tuple[str, WithLegacySSE],
) -> None:
    """Streamable HTTP at /mcp and the legacy endpoint at /sse on one server: a client given
    the /sse URL POSTs ``initialize``, gets 405 and falls back to the legacy transport
    (§Backwards Compatibility); one given /mcp uses Streamable HTTP."""
    base, app = served
    with anyio.fail_after(TIMEOUT):
        async with (
            Client(base + "/mcp", protocol_version="2025-11-25") as modern,
            Client(base + "/sse", protocol_version="2025-03-26") as old,
        ):
            old_transport = old.connection.transport  # type: ignore[union-attr]
            modern_transport = modern.connection.transport  # type: ignore[union-attr]
            assert isinstance(old_transport, StreamableHTTPTransport)
            assert isinstance(modern_transport, StreamableHTTPTransport)
            assert old_transport.legacy is not None and modern_transport.legacy is None
            assert len(app.legacy.sessions) == 1 and len(app.app.sessions) == 1
            for client in (modern, old):
                result = await client.call("echo", {"text": "both"})
                block = result.content[0]
                assert isinstance(block, t.TextContent) and block.text == "both"
    await _sessions_end(app)
