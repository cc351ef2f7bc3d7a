"""The official MCP Python SDK's client against an mcpbind server, over stdio.

The official ``ClientSession`` (on ``stdio_client``) drives ``mcpbind_server.py`` on
2025-11-25, on two older revisions, and after offering a version nobody supports (the
server must counter-offer 2025-11-25). ``ClientSession.initialize()`` always offers
2025-11-25; for any other offer the test sends the ``initialize`` request itself and
installs the answer with ``ClientSession.adopt()`` (the SDK's public "install a result
the caller already holds" hook), then sends ``notifications/initialized`` exactly as
``initialize()`` does. The negotiated version is asserted on the wire result and on the
session, and every feature test runs on every negotiated session.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

pytest.importorskip(
    "mcp", reason="the official MCP SDK (`mcp`, the `peers` extra) is not installed"
)

import mcp.types as mt
from mcp import Client as OfficialClient
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from ._support import (
    GREETING_TEXT,
    GREETING_URI,
    HERE,
    LATEST,
    LATEST_OFFER,
    MCPBIND_SERVER,
    MISSING_URI,
    OLDER_OFFERS,
    TOOLS,
    UNKNOWN_OFFER,
    USER_TEMPLATE,
    USER_TEXT,
    USER_URI,
    Negotiation,
    assert_stopped,
    has_structured_content,
    new_tag,
)

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

TIMEOUT = 10.0
NEGOTIATIONS = (LATEST_OFFER, *OLDER_OFFERS, UNKNOWN_OFFER)


@dataclass
class Connected:
    session: ClientSession
    init: mt.InitializeResult
    negotiation: Negotiation

    @property
    def version(self) -> str:
        """The version the session must have negotiated."""
        return self.negotiation.expected


def server_params(tag: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[MCPBIND_SERVER, tag], cwd=HERE)


def new_session(read: Any, write: Any) -> ClientSession:
    return ClientSession(
        read,
        write,
        read_timeout_seconds=TIMEOUT,
        client_info=mt.Implementation(name="official-interop", version="1.0.0"),
    )


@asynccontextmanager
async def open_session(tag: str) -> AsyncIterator[ClientSession]:
    """An official client session on a freshly spawned mcpbind server (not yet initialized)."""
    async with (
        stdio_client(server_params(tag)) as (read, write),
        new_session(read, write) as session,
    ):
        yield session


async def handshake(session: ClientSession, offer: str) -> mt.InitializeResult:
    """Run the initialize handshake offering ``offer``."""
    if offer == LATEST:
        return await session.initialize()  # the SDK's own handshake offers 2025-11-25
    request = mt.InitializeRequest(
        params=mt.InitializeRequestParams(
            protocol_version=offer,
            capabilities=mt.ClientCapabilities(),
            client_info=mt.Implementation(name="official-interop", version="1.0.0"),
        )
    )
    result = await session.send_request(request, mt.InitializeResult)
    session.adopt(result)
    await session.send_notification(mt.InitializedNotification())
    return result


@pytest.fixture(scope="module")
async def sessions() -> AsyncIterator[dict[Negotiation, Connected]]:
    """One official client per offered version, each on its own mcpbind server process.

    Every server is spawned before the first handshake, so they start up in parallel.
    """
    tags = {negotiation: new_tag() for negotiation in NEGOTIATIONS}
    connected: dict[Negotiation, Connected] = {}
    async with AsyncExitStack() as stack:
        streams = [
            (negotiation, await stack.enter_async_context(stdio_client(server_params(tag))))
            for negotiation, tag in tags.items()
        ]
        for negotiation, (read, write) in streams:
            session = await stack.enter_async_context(new_session(read, write))
            with anyio.fail_after(TIMEOUT):
                init = await handshake(session, negotiation.offer)
            connected[negotiation] = Connected(session, init, negotiation)
        yield connected
    for tag in tags.values():
        assert_stopped(tag)


@pytest.fixture(params=NEGOTIATIONS, ids=lambda n: n.id)
def official(request: pytest.FixtureRequest, sessions: dict[Negotiation, Connected]) -> Connected:
    """The official client that offered ``request.param``."""
    return sessions[request.param]


async def list_all_tools(session: ClientSession) -> tuple[list[mt.Tool], int]:
    """Every tool, following ``nextCursor``; also returns the number of pages."""
    tools: list[mt.Tool] = []
    cursor: str | None = None
    pages = 0
    while True:
        params = None if cursor is None else mt.PaginatedRequestParams(cursor=cursor)
        page = await session.list_tools(params=params)
        pages += 1
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools, pages


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> mt.CallToolResult:
    result = await session.call_tool(name, arguments)
    assert isinstance(result, mt.CallToolResult)
    return result


def only_text(result: mt.CallToolResult | mt.GetPromptResult) -> str:
    content = (
        result.content if isinstance(result, mt.CallToolResult) else [result.messages[0].content]
    )
    assert len(content) == 1
    block = content[0]
    assert isinstance(block, mt.TextContent)
    return block.text


# --------------------------------------------------------------------------- lifecycle
async def test_version_negotiation(official: Connected) -> None:
    """2025-11-25 basic/lifecycle.mdx §Version Negotiation and §Capability Negotiation: the
    mcpbind server answers a supported offer with the same version and an unsupported one
    with its latest (2025-11-25), which the official client accepts; the server declares
    the capabilities of what it serves."""
    init, session = official.init, official.session
    assert init.protocol_version == official.version
    assert session.protocol_version == official.version
    assert init.server_info.name == "interop-mcpbind"
    assert init.server_info.version == "1.0.0"
    assert init.instructions == "Interop test server."
    caps = init.capabilities
    assert caps.tools is not None
    assert caps.resources is not None
    assert caps.prompts is not None


async def test_ping(official: Connected) -> None:
    """2025-11-25 basic/utilities/ping.mdx §Behavior Requirements: the receiver answers
    ``ping`` promptly with an empty result."""
    with anyio.fail_after(TIMEOUT):
        assert isinstance(await official.session.send_ping(), mt.EmptyResult)


async def test_dual_era_client_stays_modern() -> None:
    """2026-07-28 basic/versioning.mdx §Compatibility Matrix (Dual-era client / Dual-era
    server) and server/discover.mdx §When to Call: the official high-level ``Client``
    (mode="auto") probes ``server/discover``; mcpbind answers with a DiscoverResult and the
    client stays on 2026-07-28 (the legacy fallback is tests/stateless/test_official_client.py)."""
    tag = new_tag()
    async with OfficialClient(
        server_params(tag), mode="auto", read_timeout_seconds=TIMEOUT
    ) as client:
        with anyio.fail_after(TIMEOUT):
            assert client.protocol_version == "2026-07-28"
            assert client.session.discover_result is not None
            result = await client.call_tool("add", {"a": 2, "b": 40})
            assert isinstance(result, mt.CallToolResult)
            assert only_text(result) == "42"
    assert_stopped(tag)


# --------------------------------------------------------------------------- tools
async def test_list_tools_follows_cursor(official: Connected) -> None:
    """2025-11-25 server/tools.mdx §Listing Tools and server/utilities/pagination.mdx
    §Pagination Flow: the official client pages through mcpbind's opaque cursors
    (page size 2) and sees every tool with its input schema."""
    with anyio.fail_after(TIMEOUT):
        tools, pages = await list_all_tools(official.session)
    assert pages == 2
    by_name = {tool.name: tool for tool in tools}
    assert set(by_name) == TOOLS and len(tools) == len(TOOLS)
    add = by_name["add"]
    assert add.description == "Add two integers."
    assert add.input_schema["type"] == "object"
    assert add.input_schema["properties"] == {"a": {"type": "integer"}, "b": {"type": "integer"}}
    assert sorted(add.input_schema["required"]) == ["a", "b"]
    if has_structured_content(official.version):
        assert add.output_schema is not None
        assert by_name["stats"].output_schema is not None
        assert by_name["echo"].output_schema is None


async def test_call_tool(official: Connected) -> None:
    """2025-11-25 server/tools.mdx §Calling Tools and §Tool Result (text content): the
    official client calls mcpbind tools and reads their text results."""
    session = official.session
    with anyio.fail_after(TIMEOUT):
        await list_all_tools(session)  # lets the official client validate structured results
        added = await call(session, "add", {"a": 1, "b": 2})
        echoed = await call(session, "echo", {"text": "héllo"})
    assert not added.is_error and only_text(added) == "3"
    assert not echoed.is_error and only_text(echoed) == "héllo"
    assert echoed.structured_content is None
    if has_structured_content(official.version):
        assert added.structured_content == {"result": 3}


async def test_call_tool_structured_output(official: Connected) -> None:
    """2025-11-25 server/tools.mdx §Structured Content and §Output Schema: mcpbind's
    structured result conforms to its output schema (the official client checks it with
    ``validate_tool_result``) and is mirrored as serialized JSON in a text block."""
    session = official.session
    with anyio.fail_after(TIMEOUT):
        await list_all_tools(session)
        result = await call(session, "stats", {"values": [1, 2, 3]})
        await session.validate_tool_result("stats", result)
    expected = {"count": 3, "total": 6.0, "mean": 2.0}
    assert not result.is_error
    assert json.loads(only_text(result)) == expected
    if has_structured_content(official.version):
        assert result.structured_content == expected


async def test_tool_execution_error(official: Connected) -> None:
    """2025-11-25 server/tools.mdx §Error Handling: a failing tool is reported as a tool
    execution error (``isError: true`` with the message), not as a JSON-RPC error."""
    with anyio.fail_after(TIMEOUT):
        result = await call(official.session, "fail", {"message": "boom"})
    assert result.is_error is True
    assert only_text(result) == "boom"


async def test_invalid_arguments_are_a_tool_execution_error() -> None:
    """2025-11-25 server/tools.mdx §Error Handling: input validation errors are reported
    as tool execution errors (``isError: true``) so the model can correct itself; unknown
    tools stay protocol errors (-32602)."""
    tag = new_tag()
    async with open_session(tag) as session:
        with anyio.fail_after(TIMEOUT):
            await handshake(session, LATEST)
            with pytest.raises(MCPError) as unknown:
                await call(session, "no-such-tool", {})
            invalid: mt.CallToolResult | MCPError
            try:
                invalid = await call(session, "add", {"a": "one", "b": 2})
            except MCPError as exc:
                invalid = exc
    assert_stopped(tag)
    assert unknown.value.code == -32602
    assert isinstance(invalid, mt.CallToolResult), f"protocol error instead of isError: {invalid!r}"
    assert invalid.is_error is True
    assert "a" in only_text(invalid)


# --------------------------------------------------------------------------- resources
async def test_read_fixed_resource(official: Connected) -> None:
    """2025-11-25 server/resources.mdx §Listing Resources and §Reading Resources (text
    content): the fixed resource is listed and read with its MIME type."""
    session = official.session
    with anyio.fail_after(TIMEOUT):
        listed = await session.list_resources()
        read = await session.read_resource(GREETING_URI)
    assert [(str(r.uri), r.name, r.mime_type) for r in listed.resources] == [
        (GREETING_URI, "greeting", "text/plain")
    ]
    assert isinstance(read, mt.ReadResourceResult)
    [contents] = read.contents
    assert isinstance(contents, mt.TextResourceContents)
    assert (str(contents.uri), contents.mime_type, contents.text) == (
        GREETING_URI,
        "text/plain",
        GREETING_TEXT,
    )


async def test_read_templated_resource(official: Connected) -> None:
    """2025-11-25 server/resources.mdx §Resource Templates: the template is listed, and a
    URI expanded from it is read through ``resources/read``."""
    session = official.session
    with anyio.fail_after(TIMEOUT):
        templates = await session.list_resource_templates()
        read = await session.read_resource(USER_URI)
    assert [(t.uri_template, t.name, t.mime_type) for t in templates.resource_templates] == [
        (USER_TEMPLATE, "user", "text/plain")
    ]
    assert isinstance(read, mt.ReadResourceResult)
    [contents] = read.contents
    assert isinstance(contents, mt.TextResourceContents)
    assert (str(contents.uri), contents.text) == (USER_URI, USER_TEXT)


async def test_missing_resource_is_an_error(official: Connected) -> None:
    """2025-11-25 server/resources.mdx §Error Handling: resource not found is JSON-RPC
    error -32002, which the official client raises as ``MCPError``."""
    with anyio.fail_after(TIMEOUT), pytest.raises(MCPError) as raised:
        await official.session.read_resource(MISSING_URI)
    assert raised.value.code == -32002


# --------------------------------------------------------------------------- prompts
async def test_prompts(official: Connected) -> None:
    """2025-11-25 server/prompts.mdx §Listing Prompts and §Getting a Prompt: the prompt is
    listed with its required argument and rendered as one user text message."""
    session = official.session
    with anyio.fail_after(TIMEOUT):
        listed = await session.list_prompts()
        got = await session.get_prompt("hello", {"name": "Ada"})
    [prompt] = listed.prompts
    assert prompt.name == "hello"
    assert prompt.description == "Say hello to someone."
    assert [(a.name, a.required) for a in prompt.arguments or []] == [("name", True)]
    assert isinstance(got, mt.GetPromptResult)
    assert [m.role for m in got.messages] == ["user"]
    assert only_text(got) == "Hello, Ada!"
