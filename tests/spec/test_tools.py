"""server/tools.mdx (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25): listing, calling,
structured content and output schemas, the two error mechanisms, list_changed."""

from __future__ import annotations

import datetime
import json
import pathlib
import sys
from typing import Any

import anyio
import jsonschema
import msgspec
import pytest

from mcpbind import (
    LATEST_HANDSHAKE,
    Client,
    ClientHandlers,
    McpError,
    Server,
    json_object,
    json_value,
)
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


@pytest.mark.memory_only
async def test_path_and_datetime_parameters_over_the_wire(tmp_path: pathlib.Path) -> None:
    """tools.mdx §Tool inputSchema: a server declaring ``pathlib.Path`` and ``datetime``
    parameters starts (a path parameter used to raise at registration), lists them as
    strings (``format: date-time`` for the datetime) and receives real objects."""
    server = Server("paths")

    @server.tool()
    def touch(path: pathlib.Path, when: datetime.datetime) -> pathlib.Path:
        target = tmp_path / path.name
        target.write_text(when.isoformat())
        return target

    async with Client(server, protocol_version=LATEST_HANDSHAKE) as client:
        [tool] = [tool async for tool in client.iter_tools()]
        props = json_object(tool.input_schema)["properties"]
        assert props == {
            "path": {"type": "string", "minLength": 1},
            "when": {"type": "string", "format": "date-time"},
        }
        result = await client.call("touch", {"path": "a/b.txt", "when": "2025-11-25T10:00:00Z"})
        assert json_value(result.structured_content) == {"result": str(tmp_path / "b.txt")}
        assert result.content == [t.TextContent(text=json.dumps(str(tmp_path / "b.txt")))]
        assert (tmp_path / "b.txt").read_text() == "2025-11-25T10:00:00+00:00"
        refused = await client.call("touch", {"path": "", "when": "2025-11-25T10:00:00Z"})
        assert refused.is_error


# Tools whose outputSchema is set by hand: a draft-07 tuple ("items" as a list,
# "additionalItems"), which 2020-12 does not allow ("items" must be one schema).
DRAFT_07_PAIR = {
    "type": "object",
    "properties": {
        "pair": {
            "type": "array",
            "items": [{"type": "integer"}, {"type": "string"}],
            "additionalItems": False,
        }
    },
    "required": ["pair"],
}


def _pair_server(schema: dict[str, Any]) -> Server:
    server = Server("dialects")

    @server.tool()
    def pair(first: Any, second: Any) -> dict[str, Any]:
        content = {"pair": [first, second]}
        return t.CallToolResult(  # type: ignore[return-value]
            content=[t.TextContent(text=json.dumps(content))], structured_content=content
        )

    server.tools["pair"].tool.output_schema = schema
    return server


@pytest.mark.memory_only
@pytest.mark.parametrize(
    ("version", "schema"),
    [
        ("2025-11-25", {"$schema": "http://json-schema.org/draft-07/schema#", **DRAFT_07_PAIR}),
        ("2025-06-18", DRAFT_07_PAIR),  # no $schema: draft-07 before 2025-11-25
    ],
    ids=["declared-draft-07", "default-draft-07-on-2025-06-18"],
)
async def test_output_schema_is_checked_in_its_declared_or_default_dialect(
    version: str, schema: dict[str, Any]
) -> None:
    """basic/index.mdx §JSON Schema Usage (2025-11-25): "Clients and servers MUST validate
    schemas according to their declared or default dialect"; the default is 2020-12 from
    2025-11-25 on; earlier versions name none, and their own schema is draft-07."""
    async with Client(_pair_server(schema), protocol_version=version) as client:
        ok = await client.call("pair", {"first": 1, "second": "a"})
        assert json_value(ok.structured_content) == {"pair": [1, "a"]}
        with pytest.raises(McpError, match=r"\$\['pair'\]\[1\]: 2 is not of type 'string'"):
            await client.call("pair", {"first": 1, "second": 2})


@pytest.mark.memory_only
async def test_output_schema_defaults_to_2020_12_and_refuses_unknown_dialects() -> None:
    """basic/index.mdx §JSON Schema Usage: without ``$schema`` a 2025-11-25 schema is 2020-12
    (where the draft-07 tuple form is not a valid schema); an unsupported dialect is refused
    with an error naming it, not silently checked as another one."""
    async with Client(_pair_server(DRAFT_07_PAIR), protocol_version="2025-11-25") as client:
        with pytest.raises(McpError, match="Tool pair output schema is not valid"):
            await client.call("pair", {"first": 1, "second": "a"})
    unknown = {"$schema": "https://example.com/my-dialect", "type": "object"}
    async with Client(_pair_server(unknown), protocol_version="2025-11-25") as client:
        with pytest.raises(McpError, match="unsupported JSON Schema dialect 'https://example"):
            await client.call("pair", {"first": 1, "second": "a"})
        unchecked = await client.call("pair", {"first": 1, "second": "a"}, check_output=False)
        assert not unchecked.is_error


@pytest.mark.memory_only
async def test_output_check_is_never_skipped_silently(monkeypatch: pytest.MonkeyPatch) -> None:
    """jsonschema is a dependency, so ``Client.call`` always checks; an install without it
    (``--no-deps``) gets one clear error naming the package and the opt-out, not a pass."""
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # import jsonschema -> ImportError
    async with Client(_pair_server(DRAFT_07_PAIR), protocol_version="2025-06-18") as client:
        with pytest.raises(ModuleNotFoundError, match=r"needs jsonschema.*check_output=False"):
            await client.call("pair", {"first": 1, "second": 2})
        skipped = await client.call("pair", {"first": 1, "second": 2}, check_output=False)
        assert not skipped.is_error
