"""The official MCP Python SDK's Streamable HTTP client against the mcpbind HTTP server.

``mcp.client.streamable_http.streamable_http_client`` + ``ClientSession`` talk to a
``StreamableHTTPApp`` served by uvicorn on 127.0.0.1, on 2025-11-25 (the SDK's own handshake)
and on 2025-03-26 (the test sends ``initialize`` itself and installs the answer with
``ClientSession.adopt()``): tools, resources, prompts, and the session's DELETE on close.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpbind import Server
from mcpbind.http import InMemoryEventStore, StreamableHTTPApp

_SKIP = "the official MCP SDK (`mcp`, the `peers` extra) is not installed"
mt = pytest.importorskip("mcp.types", reason=_SKIP)
ClientSession = pytest.importorskip("mcp", reason=_SKIP).ClientSession
streamable_http_client = pytest.importorskip(
    "mcp.client.streamable_http", reason=_SKIP
).streamable_http_client
pytest.importorskip("uvicorn", reason="uvicorn (the `http` extra) is not installed")

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

TIMEOUT = 10.0
VERSIONS = ("2025-11-25", "2025-03-26")


def build_server() -> Server:
    server = Server("interop-http-mcpbind", "1.0.0")

    @server.tool(description="Add two integers")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="Echo")
    def echo(text: str) -> str:
        return text

    @server.resource("mem://greeting", mime_type="text/plain")
    def greeting() -> str:
        return "Hello over HTTP!"

    @server.resource_template("mem://users/{user_id}", mime_type="text/plain")
    def user(user_id: str) -> str:
        return f"user {user_id}"

    @server.prompt(description="Greets someone")
    def greet(name: str) -> str:
        return f"Hello {name}"

    return server


@pytest.fixture(scope="module")
def url() -> Iterator[tuple[str, StreamableHTTPApp]]:
    from support.live_server import LiveServer  # after the skip: it needs uvicorn

    app = StreamableHTTPApp(build_server(), event_store=InMemoryEventStore(), path="/mcp")
    server = LiveServer(app).start()
    try:
        yield server.url, app
    finally:
        server.stop()


@asynccontextmanager
async def connected(url: str, version: str) -> AsyncIterator[Any]:
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write, read_timeout_seconds=TIMEOUT) as session,
    ):
        with anyio.fail_after(TIMEOUT):
            if version == "2025-11-25":
                result = await session.initialize()
            else:
                request = mt.InitializeRequest(
                    params=mt.InitializeRequestParams(
                        protocol_version=version,
                        capabilities=mt.ClientCapabilities(),
                        client_info=mt.Implementation(name="official-http", version="1"),
                    )
                )
                result = await session.send_request(request, mt.InitializeResult)
                session.adopt(result)
                await session.send_notification(mt.InitializedNotification())
        assert result.protocol_version == version
        yield session


@pytest.mark.parametrize("version", VERSIONS)
async def test_official_client_full_tour(url: tuple[str, StreamableHTTPApp], version: str) -> None:
    """2025-11-25 (and 2025-03-26) basic/transports.mdx §Streamable HTTP, server/tools.mdx,
    server/resources.mdx, server/prompts.mdx: the official client lists and calls tools,
    reads a resource and a templated one, gets a prompt; closing DELETEs the session."""
    endpoint, app = url
    before = set(app.sessions)
    async with connected(endpoint, version) as session:
        with anyio.fail_after(TIMEOUT):
            tools = await session.list_tools()
            assert {t.name for t in tools.tools} == {"add", "echo"}
            result = await session.call_tool("add", {"a": 2, "b": 40})
            assert isinstance(result.content[0], mt.TextContent)
            assert result.content[0].text == "42" and not result.is_error
            echoed = await session.call_tool("echo", {"text": "héllo"})
            assert (
                isinstance(echoed.content[0], mt.TextContent) and echoed.content[0].text == "héllo"
            )
            read = await session.read_resource("mem://greeting")
            assert isinstance(read.contents[0], mt.TextResourceContents)
            assert read.contents[0].text == "Hello over HTTP!"
            templated = await session.read_resource("mem://users/42")
            assert isinstance(templated.contents[0], mt.TextResourceContents)
            assert templated.contents[0].text == "user 42"
            prompt = await session.get_prompt("greet", {"name": "Ada"})
            content = prompt.messages[0].content
            assert isinstance(content, mt.TextContent) and content.text == "Hello Ada"
            assert len(set(app.sessions) - before) == 1
    for _ in range(500):  # the client's DELETE on close ends the session
        if not set(app.sessions) - before:
            break
        await anyio.sleep(0.02)
    assert not set(app.sessions) - before
