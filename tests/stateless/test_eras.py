"""basic/versioning.mdx §Backward Compatibility (dual-era servers and clients, the
compatibility matrix) and transports/stdio.mdx §Backward Compatibility (the discover probe)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpbind import Client, ClientHandlers, McpError, json_value
from mcpbind import types as t
from mcpbind.server import ServerSession
from mcpbind.transports import StdioClientTransport, memory_pair

from .app import build
from .helpers import Recorder, client, spawn

pytestmark = pytest.mark.anyio

OFFICIAL_APP = str(Path(__file__).with_name("official_app.py"))


async def _elicit(params: Any) -> t.ElicitResult:
    return t.ElicitResult(action="accept", content={"name": "Alice"})


HANDLERS = ClientHandlers(elicitation=_elicit, roots=[t.Root(uri="file:///work", name="work")])


async def application(c: Client) -> dict[str, Any]:
    """The same application code, whatever the era: what it saw, for comparison."""
    tools = [tool.name async for tool in c.iter_tools()]
    added = await c.call("add", {"a": 2, "b": 3})
    greeted = await c.call("greet")
    read = await c.read_resource(t.ReadResourceRequestParams(uri="mem://greeting"))
    prompt = await c.get_prompt(t.GetPromptRequestParams(name="hello", arguments={"name": "Bo"}))
    contents = read.contents[0]
    message = prompt.messages[0].content
    return {
        "tools": tools,
        "add": json_value(added.structured_content),
        "greet": _text(greeted),
        "read": contents.text if isinstance(contents, t.TextResourceContents) else None,
        "prompt": message.text if isinstance(message, t.TextContent) else None,
    }


def _text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


@pytest.mark.parametrize(
    ("config", "version", "era"),
    [
        ("legacy", "auto", "handshake"),
        ("modern", "auto", "stateless"),
        ("dual", "auto", "stateless"),
        ("dual", "2025-11-25", "handshake"),
        ("dual", "2026-07-28", "stateless"),
    ],
)
async def test_same_application_code_on_every_server(
    transport: str, config: str, version: str, era: str
) -> None:
    """versioning.mdx §Compatibility Matrix (dual-era client with legacy, modern and dual-era
    servers): the client picks the era itself; the application sees the same results."""
    async with client(transport, config, protocol_version=version, handlers=HANDLERS) as c:
        assert c.era == era
        seen = await application(c)
    assert seen["greet"] == "Hello, Alice!"
    assert seen["add"] == {"result": 5}
    assert seen["read"] == "Hello from the stateless app!"
    assert seen["prompt"] == "Hello, Bo!"
    assert seen["tools"][:3] == ["add", "greet", "capital"]


@pytest.mark.memory_only
async def test_probe_then_fallback_on_the_same_connection() -> None:
    """stdio.mdx §Backward Compatibility: server/discover first; a legacy server answers with
    an error (here -32022 naming its versions), and the client falls back to initialize on the
    same connection."""
    client_end, server_end = memory_pair()
    wire = Recorder(server_end)
    session = ServerSession(build("legacy"), wire)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        async with Client(client_end, protocol_version="auto") as c:
            assert c.era == "handshake" and c.protocol_version == "2025-11-25"
            await c.ping()
        tg.cancel_scope.cancel()
    methods = [m["method"] for m in wire.requests()]
    assert methods[:3] == ["server/discover", "initialize", "ping"]


@pytest.mark.memory_only
async def test_modern_only_server_names_its_versions_to_legacy_clients() -> None:
    """versioning.mdx §Backward Compatibility: a modern-only server names the versions it
    supports in the error it returns to initialize."""
    with pytest.raises(McpError) as caught:
        async with Client(build("modern"), protocol_version="2025-11-25"):
            pass
    assert caught.value.data["supported"] == ["2026-07-28"]


@pytest.mark.memory_only
async def test_forced_modern_client_against_legacy_server_fails() -> None:
    """versioning.mdx §Compatibility Matrix (modern client, legacy server): fails with an
    actionable error, no silent fallback when the version is forced."""
    with pytest.raises(McpError):
        async with Client(build("legacy"), protocol_version="2026-07-28"):
            pass


async def test_legacy_server_answers_a_modern_request_with_its_versions(transport: str) -> None:
    """versioning.mdx §Protocol Version Negotiation: a server that does not implement the
    requested version MUST answer -32022 listing the versions it supports -- also a server
    serving only the handshake era, on a connection (it said -32600 "server not initialized",
    which tells a client nothing to retry with). Issue 31 item 7."""
    with pytest.raises(McpError) as caught:
        async with client(transport, "legacy", protocol_version="2026-07-28") as c:
            await c.call("add", {"a": 1, "b": 2})
    assert caught.value.code == -32022
    assert caught.value.data == {
        "supported": ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
        "requested": "2026-07-28",
    }


@pytest.mark.memory_only
async def test_one_server_object_serves_both_eras_at_once() -> None:
    """versioning.mdx §Compatibility Matrix (a dual-era server MAY serve both eras
    concurrently): two connections to one Server object, calls interleaved; each greet asks
    for input its era's way (a server-to-client request vs. an input round)."""
    server = build("dual")
    asked: dict[str, int] = {"handshake": 0, "stateless": 0}

    def handlers(era: str) -> ClientHandlers:
        async def elicit(params: Any) -> t.ElicitResult:
            asked[era] += 1
            await anyio.sleep(0.01)  # let the other connection's calls run meanwhile
            return t.ElicitResult(action="accept", content={"name": era})

        return ClientHandlers(elicitation=elicit)

    results: dict[str, list[str]] = {}
    async with (
        Client(server, protocol_version="2025-11-25", handlers=handlers("handshake")) as old,
        Client(server, protocol_version="auto", handlers=handlers("stateless")) as new,
    ):
        assert (old.era, new.era) == ("handshake", "stateless")

        async def run(c: Client, era: str) -> None:
            results[era] = [_text(await c.call("greet")) for _ in range(3)]

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, old, "handshake")
            tg.start_soon(run, new, "stateless")
        count = await old.call("call_count", {"tool": "greet"})
    # the handshake greets ran once each; each stateless greet ran twice (ask, then answer)
    assert json_value(count.structured_content) == {"result": 9}
    assert results == {
        "handshake": ["Hello, handshake!"] * 3,
        "stateless": ["Hello, stateless!"] * 3,
    }
    assert asked == {"handshake": 3, "stateless": 3}


@pytest.mark.parametrize(("outer", "inner"), [("2025-11-25", "stateless"), ("auto", "handshake")])
async def test_one_stdio_process_serves_both_eras(outer: str, inner: str) -> None:
    """versioning.mdx §Compatibility Matrix: one server process, one Server object, a stdio
    connection of one era open while an in-process connection of the other era runs."""
    async with spawn("dual") as stdio, Client(stdio, protocol_version=outer) as c:
        assert c.era == ("handshake" if outer != "auto" else "stateless")
        result = await c.call("other_era", {"era": inner})
        assert json_value(result.structured_content) == {
            "era": inner,
            "greeting": "Hello, Inner!",
        }
        assert _text(await c.call("add", {"a": 1, "b": 1})) == "2"  # the outer one still works


@pytest.mark.parametrize(("version", "era"), [("auto", "stateless"), ("2025-11-25", "handshake")])
async def test_official_sdk_server_in_both_eras(version: str, era: str) -> None:
    """versioning.mdx §Compatibility Matrix with the official SDK (mcp 2.3.0, a dual-era stdio
    server): the same application calls work in both eras, including input for ``greet``
    (MRTR on 2026-07-28, a server-to-client elicitation on 2025-11-25)."""
    async with (
        StdioClientTransport.spawn(sys.executable, [OFFICIAL_APP]) as stdio,
        Client(stdio, protocol_version=version, handlers=HANDLERS) as c,
    ):
        assert c.era == era
        assert c.server_info is not None and c.server_info.name == "official-app"
        tools = [tool.name async for tool in c.iter_tools()]
        added = await c.call("add", {"a": 2, "b": 3})
        greeted = await c.call("greet")
        read = await c.read_resource(t.ReadResourceRequestParams(uri="mem://greeting"))
    assert tools == ["add", "greet"]
    assert _text(added) == "5"
    assert _text(greeted) == "Hello, Alice!"
    contents = read.contents[0]
    assert isinstance(contents, t.TextResourceContents)
    assert contents.text == "Hello from the official app!"
