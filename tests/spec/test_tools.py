"""server/tools.mdx (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25): listing, calling,
structured content and output schemas, the two error mechanisms, list_changed."""

from __future__ import annotations

import json
from typing import Any

import anyio
import jsonschema
import msgspec
import pytest

from mcpbind import Client, ClientHandlers, McpError, Server, json_object, json_value
from mcpbind import types as t
from mcpbind.protocol import INVALID_PARAMS

from .conftest import Connect
from .helpers import Notes, exchange, raw_connection, raw_handshake, settle, text_of

pytestmark = pytest.mark.anyio

LIST_CHANGED = "notifications/tools/list_changed"


async def test_list_tools_describes_each_tool(connect: Connect) -> None:
    """tools.mdx §Listing Tools / §Tool: name, title, description, inputSchema (a JSON Schema
    object; a tool without parameters gets ``{"type": "object", "additionalProperties": false}``,
    §Tool with no parameters), annotations and outputSchema."""
    async with connect("full") as client:
        tools = {tool.name: tool async for tool in client.iter_tools()}
    add = tools["add"]
    assert add.title == "Adder"
    assert add.description == "Add two integers."
    assert add.annotations == t.ToolAnnotations(read_only_hint=True)
    assert json_object(add.input_schema) == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert tools["echo"].description == "Echo the text back."
    assert json_object(tools["picture"].input_schema) == {
        "type": "object",
        "additionalProperties": False,
    }
    weather_schema = tools["weather"].output_schema
    assert not isinstance(weather_schema, msgspec.UnsetType)
    weather = json_object(weather_schema)
    assert weather["type"] == "object"
    assert set(weather["required"]) == {"city", "temperature", "conditions"}
    for tool in tools.values():
        jsonschema.Draft202012Validator.check_schema(json_object(tool.input_schema))


async def test_structured_content_matches_the_output_schema(connect: Connect) -> None:
    """tools.mdx §Structured Content / §Output Schema: structured results conform to the output
    schema, and for backwards compatibility the serialized JSON is also a TextContent block."""
    async with connect("full") as client:
        tools = {tool.name: tool async for tool in client.iter_tools()}
        schema = tools["weather"].output_schema
        result = await client.call("weather", {"city": "Paris"})
    expected = {"city": "Paris", "temperature": 21.5, "conditions": "sunny"}
    assert json_value(result.structured_content) == expected
    assert not isinstance(schema, msgspec.UnsetType)
    jsonschema.validate(json_value(result.structured_content), json_object(schema))
    assert t.TextContent(text='{"city":"Paris","temperature":21.5,"conditions":"sunny"}') in (
        result.content
    )


@pytest.mark.memory_only
async def test_client_rejects_structured_content_violating_the_schema(connect: Connect) -> None:
    """tools.mdx §Output Schema: "Clients SHOULD validate structured results against this
    schema" -- ``Client.call`` raises, naming the offending path; a declared schema with no
    structured content at all is also rejected; ``check_output=False`` opts out."""
    async with connect("full") as client:
        with pytest.raises(McpError, match=r"\$\['temperature'\]: 'hot' is not of type"):
            await client.call("bad_weather", {"city": "Oslo"})
        with pytest.raises(McpError, match="returned no structured content"):
            await client.call("unstructured_weather", {"city": "Oslo"})
        unchecked = await client.call("bad_weather", {"city": "Oslo"}, check_output=False)
    unchecked_content = json_value(unchecked.structured_content)
    assert isinstance(unchecked_content, dict)
    assert unchecked_content["temperature"] == "hot"


ARGUMENT_ERRORS: list[tuple[str, dict[str, Any], str]] = [
    ("add", {"a": "one", "b": 2}, "`$.a`"),
    ("store", {"item": {"name": "x", "count": "many"}}, "`$.item.count`"),
    ("store", {"item": {"name": "x", "count": 1}, "tags": [1]}, "`$.tags[0]`"),
    ("add", {"a": 1}, "missing required field `b`"),
    ("add", {"a": 1, "b": 2, "c": 3}, "unknown field `c`"),
]


@pytest.mark.memory_only
@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
async def test_invalid_arguments_are_invalid_params_with_a_path(
    connect: Connect, version: str
) -> None:
    """tools.mdx §Error Handling (2024-11-05, 2025-03-26, 2025-06-18: "Invalid arguments" is a
    protocol error): -32602, and the message names the JSON path of the offending value."""
    async with connect("full", protocol_version=version) as client:
        for name, args, where in ARGUMENT_ERRORS:
            with pytest.raises(McpError) as caught:
                await client.call(name, args)
            assert caught.value.code == INVALID_PARAMS
            assert where in caught.value.message, caught.value.message


async def test_invalid_arguments_are_tool_errors_with_a_path(connect: Connect) -> None:
    """tools.mdx §Error Handling (2025-11-25: "Input validation errors" are Tool Execution
    Errors, so the model can self-correct): ``isError: true`` whose text names the JSON path of
    the offending value."""
    async with connect("full", protocol_version="2025-11-25") as client:
        for name, args, where in ARGUMENT_ERRORS:
            result = await client.call(name, args)
            assert result.is_error is True, (name, args)
            assert where in text_of(result), text_of(result)


@pytest.mark.memory_only
async def test_unknown_tool_is_a_protocol_error(connect: Connect) -> None:
    """tools.mdx §Error Handling: "Unknown tools" are protocol errors (-32602 in the example)."""
    async with connect("full") as client:
        with pytest.raises(McpError) as caught:
            await client.call_tool(t.CallToolRequestParams(name="no_such_tool"))
    assert caught.value.code == INVALID_PARAMS
    assert "no_such_tool" in caught.value.message


async def test_tool_failure_is_an_execution_error(connect: Connect) -> None:
    """tools.mdx §Error Handling 2: API failures and business-logic errors are reported in the
    result with ``isError: true`` so the model can see them."""
    async with connect("full") as client:
        result = await client.call("fail", {"message": "disk on fire"})
    assert result.is_error is True
    assert text_of(result) == "disk on fire"


@pytest.mark.memory_only
async def test_tool_raising_a_protocol_error_keeps_code_and_data(connect: Connect) -> None:
    """tools.mdx §Error Handling 1: a handler may still answer with a JSON-RPC error; its code,
    message and data reach the client unchanged."""
    async with connect("full") as client:
        with pytest.raises(McpError) as caught:
            await client.call("refuse")
    assert caught.value == McpError(-32050, "refused on purpose", {"why": "test"})


@pytest.mark.memory_only
async def test_tool_result_content_blocks(connect: Connect) -> None:
    """tools.mdx §Tool Result §Image Content: a returned content block is the result's content."""
    async with connect("full") as client:
        result = await client.call_tool(t.CallToolRequestParams(name="picture"))
    assert result.content == [t.ImageContent(data="aGVsbG8=", mime_type="image/png")]


@pytest.mark.memory_only
async def test_content_returning_tool_declares_no_output_schema(connect: Connect) -> None:
    """tools.mdx §Output Schema: "Servers MUST provide structured results that conform to this
    schema" -- a tool that returns content blocks must not declare an output schema it never
    fulfils."""
    async with connect("full") as client:
        result = await client.call("picture")
    assert result.is_error is not True


async def test_list_changed_is_debounced(connect: Connect) -> None:
    """tools.mdx §List Changed Notification / §Capabilities (``listChanged``): registering tools
    after the session started sends notifications/tools/list_changed -- one for a burst of
    registrations -- and the new tools are listed."""
    notes = Notes()
    async with connect("full", handlers=ClientHandlers(notification=notes)) as client:
        assert (await client.call("add_tools", {"n": 12, "prefix": "extra"})).is_error is not True
        await settle(client, notes, LIST_CHANGED)
        assert notes.count(LIST_CHANGED) == 1
        names = {tool.name async for tool in client.iter_tools()}
        assert {f"extra{i}" for i in range(12)} <= names
        await client.call("remove_tools", {"prefix": "extra"})
        await settle(client, notes, LIST_CHANGED, count=2)
        assert notes.count(LIST_CHANGED) == 2
        assert not {tool.name async for tool in client.iter_tools()} & {"extra0"}


async def test_unrepresentable_argument_is_a_tool_error(transport: str) -> None:
    """tools.mdx §Error Handling (2025-11-25): arguments the tool cannot take -- here a number
    beyond the float range, valid JSON that no parameter can hold -- are a tool execution error
    the model can see, not a protocol error; the session keeps working."""
    call = (
        b'{"jsonrpc":"2.0","id":9,"method":"tools/call",'
        b'"params":{"name":"add","arguments":{"a":1e400,"b":1}}}'
    )
    async with raw_connection(transport) as peer:
        await raw_handshake(peer)
        await peer.send(call)
        with anyio.fail_after(5):
            reply = json.loads(await peer.receive())
        assert reply["id"] == 9
        assert reply["result"]["isError"] is True
        assert "Number out of range" in reply["result"]["content"][0]["text"]
        pong = await exchange(peer, {"jsonrpc": "2.0", "id": 10, "method": "ping"})
        assert pong == {"jsonrpc": "2.0", "id": 10, "result": {}}


@pytest.mark.memory_only
async def test_refresh_lists_follows_list_changed() -> None:
    """tools.mdx §List Changed Notification: a client that keeps the tool list fetches it after
    the handshake and again when the server announces a change (all pages)."""
    server = Server("refreshing", page_size=1)

    @server.tool()
    def first() -> str:
        return "1"

    @server.tool()
    def add_tool(name: str) -> None:
        server.tool(name=name)(lambda: "new")

    async with Client(server, refresh_lists=True) as client:
        assert [tool.name for tool in client.tools or []] == ["first", "add_tool"]
        assert client.prompts is None  # not declared: nothing to keep
        await client.call("add_tool", {"name": "second"})
        with anyio.fail_after(5):
            while len(client.tools or []) < 3:  # noqa: ASYNC110 - the refresh has no event
                await anyio.sleep(0.01)
        assert [tool.name for tool in client.tools or []] == ["first", "add_tool", "second"]
