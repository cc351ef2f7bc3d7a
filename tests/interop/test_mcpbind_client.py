"""mcpbind's client against a server built with the official MCP Python SDK, over stdio.

``Client(transport, protocol_version=...)`` offers 2025-11-25, 2025-03-26, and a version
nobody supports (the server must counter-offer 2025-11-25) to ``official_server.py``
(``MCPServer`` on stdio) through ``StdioClientTransport``; the negotiated version is
asserted on ``client.protocol_version`` and every feature test runs on every negotiated
session. 2024-11-05 is covered in the other direction only: an official server costs
about 1.5 s of CPU to start, and the interop suite must stay under 30 s.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass
from typing import Any

import anyio
import msgspec
import pytest

pytest.importorskip(
    "mcp", reason="the official MCP SDK (`mcp`, the `peers` extra) is not installed"
)

from mcpbind import Client, McpError, json_object, json_value
from mcpbind import types as t
from mcpbind.transports import StdioClientTransport

from ._support import (
    GREETING_TEXT,
    GREETING_URI,
    HERE,
    LATEST_OFFER,
    MISSING_URI,
    OFFICIAL_SERVER,
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
NEGOTIATIONS = (LATEST_OFFER, OLDER_OFFERS[0], UNKNOWN_OFFER)


@dataclass
class Connected:
    client: Client
    transport: StdioClientTransport
    negotiation: Negotiation

    @property
    def version(self) -> str:
        """The version the session must have negotiated."""
        return self.negotiation.expected


def spawn(tag: str) -> AbstractAsyncContextManager[StdioClientTransport]:
    return StdioClientTransport.spawn(sys.executable, [OFFICIAL_SERVER, tag], cwd=HERE)


def new_client(transport: StdioClientTransport, negotiation: Negotiation) -> Client:
    return Client(
        transport, name="mcpbind-interop", protocol_version=negotiation.offer, timeout=TIMEOUT
    )


@pytest.fixture(scope="module")
async def clients() -> AsyncIterator[dict[Negotiation, Connected]]:
    """One mcpbind client per offered version, each on its own official server process.

    Every server is spawned before the first handshake, so they start up in parallel.
    """
    tags = {negotiation: new_tag() for negotiation in NEGOTIATIONS}
    connected: dict[Negotiation, Connected] = {}
    async with AsyncExitStack() as stack:
        transports = [
            (negotiation, await stack.enter_async_context(spawn(tag)))
            for negotiation, tag in tags.items()
        ]
        for negotiation, transport in transports:
            client = await stack.enter_async_context(new_client(transport, negotiation))
            connected[negotiation] = Connected(client, transport, negotiation)
        yield connected
    for negotiation, tag in tags.items():
        assert connected[negotiation].transport.returncode is not None
        assert_stopped(tag)


@pytest.fixture(params=NEGOTIATIONS, ids=lambda n: n.id)
def mcpbind(request: pytest.FixtureRequest, clients: dict[Negotiation, Connected]) -> Connected:
    """The mcpbind client that offered ``request.param``."""
    return clients[request.param]


def only_text(content: list[Any]) -> str:
    assert len(content) == 1
    block = content[0]
    assert isinstance(block, t.TextContent)
    return block.text


# --------------------------------------------------------------------------- lifecycle
async def test_version_negotiation(mcpbind: Connected) -> None:
    """2025-11-25 basic/lifecycle.mdx §Version Negotiation and §Capability Negotiation: the
    official server answers a supported offer with the same version and an unsupported one
    with its latest (2025-11-25), which mcpbind accepts; mcpbind records the negotiated
    version, server info and capabilities."""
    client = mcpbind.client
    assert client.protocol_version == mcpbind.version
    assert client.server_info is not None
    assert (client.server_info.name, client.server_info.version) == ("interop-official", "1.0.0")
    assert client.instructions == "Interop test server."
    caps = client.server_capabilities
    assert caps is not None
    assert isinstance(caps.tools, t.ServerCapabilitiesTools)
    assert isinstance(caps.resources, t.ServerCapabilitiesResources)
    assert isinstance(caps.prompts, t.ServerCapabilitiesPrompts)


async def test_ping(mcpbind: Connected) -> None:
    """2025-11-25 basic/utilities/ping.mdx §Behavior Requirements: the official server
    answers mcpbind's ``ping`` with an empty result."""
    with anyio.fail_after(TIMEOUT):
        await mcpbind.client.ping()


# --------------------------------------------------------------------------- tools
async def test_list_tools(mcpbind: Connected) -> None:
    """2025-11-25 server/tools.mdx §Listing Tools: mcpbind decodes the official server's
    tool list, input schemas and (from 2025-06-18) output schemas."""
    with anyio.fail_after(TIMEOUT):
        tools = [tool async for tool in mcpbind.client.iter_tools()]
    by_name = {tool.name: tool for tool in tools}
    assert set(by_name) == TOOLS and len(tools) == len(TOOLS)
    add = by_name["add"]
    assert add.description == "Add two integers."
    input_schema = json_object(add.input_schema)
    assert input_schema["type"] == "object"
    assert {k: v["type"] for k, v in input_schema["properties"].items()} == {
        "a": "integer",
        "b": "integer",
    }
    assert sorted(input_schema["required"]) == ["a", "b"]
    if has_structured_content(mcpbind.version):
        for name in ("add", "stats"):
            output_schema = by_name[name].output_schema
            assert not isinstance(output_schema, msgspec.UnsetType), name
            assert isinstance(json_object(output_schema), dict), name
        assert isinstance(by_name["echo"].output_schema, msgspec.UnsetType)


async def test_call_tool(mcpbind: Connected) -> None:
    """2025-11-25 server/tools.mdx §Calling Tools and §Tool Result (text content)."""
    client = mcpbind.client
    with anyio.fail_after(TIMEOUT):
        added = await client.call("add", {"a": 1, "b": 2})
        echoed = await client.call("echo", {"text": "héllo"})
    assert not added.is_error and only_text(added.content) == "3"
    assert not echoed.is_error and only_text(echoed.content) == "héllo"
    assert isinstance(echoed.structured_content, msgspec.UnsetType)
    if has_structured_content(mcpbind.version):
        assert json_value(added.structured_content) == {"result": 3}


async def test_call_tool_structured_output(mcpbind: Connected) -> None:
    """2025-11-25 server/tools.mdx §Structured Content and §Output Schema: the official
    server's structured result passes mcpbind's output-schema check (``Client.call``) and
    is mirrored as serialized JSON in a text block."""
    with anyio.fail_after(TIMEOUT):
        result = await mcpbind.client.call("stats", {"values": [1, 2, 3]})
    expected = {"count": 3, "total": 6.0, "mean": 2.0}
    assert not result.is_error
    assert json.loads(only_text(result.content)) == expected
    if has_structured_content(mcpbind.version):
        assert json_value(result.structured_content) == expected


async def test_tool_execution_errors(mcpbind: Connected) -> None:
    """2025-11-25 server/tools.mdx §Error Handling: a failing tool and arguments that fail
    validation come back as tool execution errors (``isError: true``), which mcpbind returns
    as results (no output-schema check) rather than raising."""
    client = mcpbind.client
    with anyio.fail_after(TIMEOUT):
        failed = await client.call("fail", {"message": "boom"})
        invalid = await client.call("add", {"a": "one", "b": 2})
    assert failed.is_error is True
    assert "boom" in only_text(failed.content)
    assert invalid.is_error is True
    assert only_text(invalid.content)


# --------------------------------------------------------------------------- resources
async def test_read_fixed_resource(mcpbind: Connected) -> None:
    """2025-11-25 server/resources.mdx §Listing Resources and §Reading Resources (text
    content)."""
    client = mcpbind.client
    with anyio.fail_after(TIMEOUT):
        listed = [res async for res in client.iter_resources()]
        read = await client.read_resource(t.ReadResourceRequestParams(uri=GREETING_URI))
    assert [(r.uri, r.name, r.mime_type) for r in listed] == [
        (GREETING_URI, "greeting", "text/plain")
    ]
    [contents] = read.contents
    assert isinstance(contents, t.TextResourceContents)
    assert (contents.uri, contents.mime_type, contents.text) == (
        GREETING_URI,
        "text/plain",
        GREETING_TEXT,
    )


async def test_read_templated_resource(mcpbind: Connected) -> None:
    """2025-11-25 server/resources.mdx §Resource Templates: the template is listed, and a
    URI expanded from it is read through ``resources/read``."""
    client = mcpbind.client
    with anyio.fail_after(TIMEOUT):
        templates = [tpl async for tpl in client.iter_resource_templates()]
        read = await client.read_resource(t.ReadResourceRequestParams(uri=USER_URI))
    assert [(tpl.uri_template, tpl.name, tpl.mime_type) for tpl in templates] == [
        (USER_TEMPLATE, "user", "text/plain")
    ]
    [contents] = read.contents
    assert isinstance(contents, t.TextResourceContents)
    assert (contents.uri, contents.text) == (USER_URI, USER_TEXT)


async def test_missing_resource_is_an_error(mcpbind: Connected) -> None:
    """2025-11-25 server/resources.mdx §Error Handling: reading an unknown URI is a JSON-RPC
    error, raised as ``McpError`` (the official server sends -32602, SEP-2164's code, where
    2025-11-25 suggests -32002: only the error itself is asserted)."""
    with anyio.fail_after(TIMEOUT), pytest.raises(McpError) as raised:
        await mcpbind.client.read_resource(t.ReadResourceRequestParams(uri=MISSING_URI))
    assert raised.value.code in (-32002, -32602)
    assert MISSING_URI in raised.value.message


# --------------------------------------------------------------------------- prompts
async def test_prompts(mcpbind: Connected) -> None:
    """2025-11-25 server/prompts.mdx §Listing Prompts and §Getting a Prompt."""
    client = mcpbind.client
    with anyio.fail_after(TIMEOUT):
        listed = [prompt async for prompt in client.iter_prompts()]
        got = await client.get_prompt(
            t.GetPromptRequestParams(name="hello", arguments={"name": "Ada"})
        )
    [prompt] = listed
    assert prompt.name == "hello"
    assert prompt.description == "Say hello to someone."
    assert [(a.name, a.required) for a in prompt.arguments or []] == [("name", True)]
    assert [m.role for m in got.messages] == ["user"]
    assert only_text([m.content for m in got.messages]) == "Hello, Ada!"
