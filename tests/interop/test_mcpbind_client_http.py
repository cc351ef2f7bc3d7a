"""mcpbind's client against the official MCP Python SDK's server over Streamable HTTP.

The official ``MCPServer`` with the interop surface (official_server.py) runs under uvicorn
on 127.0.0.1, once answering with SSE streams (its default) and once with JSON bodies
(``json_response=True``), and mcpbind's ``Client("http://...")`` uses it on 2025-11-25 and
2025-03-26: tools, resources, templates and prompts, plus the session lifecycle over HTTP
(2025-11-25 basic/transports.mdx §Streamable HTTP, §Session Management).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from support.live_server import spawn_server

pytest.importorskip(
    "mcp", reason="the official MCP SDK (`mcp`, the `peers` extra) is not installed"
)

from mcpbind import Client, McpError
from mcpbind import types as t
from mcpbind.http.client import StreamableHTTPTransport

from ._support import GREETING_TEXT, GREETING_URI, MISSING_URI, TOOLS, USER_TEXT, USER_URI

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

SERVE = str(Path(__file__).resolve().parent.parent / "http" / "client" / "serve.py")
VERSIONS = ("2025-11-25", "2025-03-26")


@pytest.fixture(scope="module", params=["official", "official-json"])
def official_url(request: pytest.FixtureRequest) -> Iterator[str]:
    with spawn_server(SERVE, request.param) as (_, base):
        yield base + "/mcp"


@pytest.mark.parametrize("version", VERSIONS)
async def test_tools_resources_prompts(official_url: str, version: str) -> None:
    """server/tools, server/resources, server/prompts over Streamable HTTP; the negotiated
    version goes on every later request (§Protocol Version Header)."""
    async with Client(official_url, protocol_version=version, timeout=10) as client:
        assert client.protocol_version == version
        transport = client.connection.transport  # type: ignore[union-attr]
        assert isinstance(transport, StreamableHTTPTransport)
        assert transport.protocol_version == version
        assert transport.session_id is not None

        tools = await client.list_tools()
        assert {tool.name for tool in tools.tools} == TOOLS
        added = await client.call("add", {"a": 20, "b": 22})
        block = added.content[0]
        assert isinstance(block, t.TextContent) and block.text == "42"
        failed = await client.call("fail", {"message": "nope"})
        assert failed.is_error

        resources = await client.list_resources()
        assert GREETING_URI in {r.uri for r in resources.resources}
        read = await client.read_resource(t.ReadResourceRequestParams(uri=GREETING_URI))
        content = read.contents[0]
        assert isinstance(content, t.TextResourceContents) and content.text == GREETING_TEXT
        user = await client.read_resource(t.ReadResourceRequestParams(uri=USER_URI))
        user_content = user.contents[0]
        assert isinstance(user_content, t.TextResourceContents)
        assert user_content.text == USER_TEXT
        with pytest.raises(McpError):
            await client.read_resource(t.ReadResourceRequestParams(uri=MISSING_URI))

        prompts = await client.list_prompts()
        assert "hello" in {p.name for p in prompts.prompts}
        prompt = await client.get_prompt(
            t.GetPromptRequestParams(name="hello", arguments={"name": "Grace"})
        )
        message = prompt.messages[0].content
        assert isinstance(message, t.TextContent) and "Grace" in message.text


async def test_concurrent_calls_share_one_session(official_url: str) -> None:
    """§Sending Messages: each request is its own POST; many may be in flight at once."""
    async with Client(official_url, timeout=10) as client:
        results: dict[int, str] = {}

        async def add(i: int) -> None:
            result = await client.call("add", {"a": i, "b": 1})
            block = result.content[0]
            assert isinstance(block, t.TextContent)
            results[i] = block.text

        async with anyio.create_task_group() as tg:
            for i in range(20):
                tg.start_soon(add, i)
        assert results == {i: str(i + 1) for i in range(20)}


async def test_stateless_era_over_http(official_url: str) -> None:
    """2026-07-28 basic/transports/streamable-http.mdx §Request Metadata: each request
    carries MCP-Protocol-Version, Mcp-Method and Mcp-Name headers matching its body (the
    official server rejects a mismatch with 400), and there is no session."""
    async with Client(official_url, protocol_version="2026-07-28", timeout=10) as client:
        assert client.protocol_version == "2026-07-28"
        transport = client.connection.transport  # type: ignore[union-attr]
        assert isinstance(transport, StreamableHTTPTransport)
        assert transport.session_id is None
        result = await client.call("add", {"a": 1, "b": 2})
        block = result.content[0]
        assert isinstance(block, t.TextContent) and block.text == "3"
        read = await client.read_resource(t.ReadResourceRequestParams(uri=GREETING_URI))
        content = read.contents[0]
        assert isinstance(content, t.TextResourceContents) and content.text == GREETING_TEXT
