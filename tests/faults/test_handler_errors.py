"""Handler failures are answers, not crashes.

- 2025-11-25 server/tools.mdx §Error Handling: a failing tool is a *tool execution error*, a
  ``CallToolResult`` with ``isError: true`` the model can read, not a protocol error; so are
  invalid arguments from 2025-11-25 on (SEP-1303), while 2025-06-18 made them -32602.
- JSON-RPC 2.0 §5.1: any other handler failure is -32603 Internal error; mcpbind sends no
  exception text unless ``SessionOptions(debug=True)``, and never a traceback.
- ``McpError`` raised by a handler is the error object to send: code, message and data pass
  through unchanged.
After every failure the same session keeps answering.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpbind import (
    LATEST_HANDSHAKE,
    LATEST_STATELESS,
    Client,
    ClientHandlers,
    Context,
    McpError,
    Server,
    ToolExecutionError,
    json_value,
)
from mcpbind import types as t
from mcpbind.protocol import SessionOptions
from mcpbind.server.session import ServerSession
from mcpbind.transports import memory_pair

from .wiretap import Tap

pytestmark = pytest.mark.anyio

SECRET = "db password=hunter2 (/srv/app/settings.py, line 12)"
LEAK = f'Traceback (most recent call last):\n  File "/srv/app/tool.py", line 3\n{SECRET}'
"""Exception text a sanitized error must never carry to the peer."""

INTERNAL_ERROR = -32603


def make_server() -> Server:
    server = Server("handler-errors")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    def disk_full() -> str:
        raise OSError("the disk is full")

    @server.tool()
    def silent_failure() -> str:
        raise RuntimeError

    @server.tool()
    def explains() -> str:
        raise ToolExecutionError("the city name is ambiguous; add a country")

    @server.tool()
    def wraps_a_cli() -> str:
        raise SystemExit(2)  # argparse on bad arguments

    @server.tool()
    async def interrupted() -> str:
        raise KeyboardInterrupt

    @server.tool()
    def interrupted_in_thread() -> str:
        raise KeyboardInterrupt

    @server.resource("mem://exits")
    def exiting_resource() -> str:
        raise SystemExit(1)

    @server.tool()
    def refuses() -> str:
        raise McpError(-32042, "quota exceeded", {"retryAfter": 3, "tiers": ["free"]})

    @server.tool()
    async def asks_the_model(ctx: Context) -> str:
        message = t.SamplingMessage(content=t.TextContent(text="hi"), role="user")
        params = t.CreateMessageRequestParams(max_tokens=5, messages=[message])
        reply = await ctx.sample(params)
        return str(reply.model)

    @server.resource("mem://leaky")
    def leaky_resource() -> str:
        raise KeyError(LEAK)

    @server.prompt()
    def leaky_prompt() -> str:
        raise ValueError(LEAK)

    @server.method("prompts/list")  # a low-level handler replacing a standard method
    async def leaky_list(params: Any, ctx: Context) -> Any:
        raise RuntimeError(LEAK)

    return server


@asynccontextmanager
async def connected(
    server: Server,
    *,
    options: SessionOptions | None = None,
    handlers: ClientHandlers | None = None,
    protocol_version: str = LATEST_HANDSHAKE,
) -> AsyncIterator[tuple[Client, Tap, Tap]]:
    """A Client talking in memory to a session of ``server``; the taps see what each sent.
    The handshake era (2025-11-25), whose error handling these tests pin down, by default."""
    client_end, server_end = memory_pair()
    server_tap, client_tap = Tap(server_end), Tap(client_end)
    session = ServerSession(server, server_tap, options=options)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        with anyio.fail_after(10):
            async with Client(
                client_tap, handlers=handlers, protocol_version=protocol_version
            ) as client:
                yield client, server_tap, client_tap
        tg.cancel_scope.cancel()


async def still_works(client: Client) -> None:
    params = t.CallToolRequestParams(name="add", arguments={"a": 2, "b": 3})
    assert json_value((await client.call_tool(params)).structured_content) == {"result": 5}
    assert await client.ping() is not None


# ---------------------------------------------------------------------- tool errors


@pytest.mark.parametrize(
    ("tool", "text", "debug_text"),
    [
        ("disk_full", "Internal error", "OSError: the disk is full"),
        ("silent_failure", "Internal error", "RuntimeError"),
        ("explains", "the city name is ambiguous; add a country", None),
    ],
)
@pytest.mark.parametrize("debug", [False, True])
async def test_tool_exception_is_an_error_result(
    tool: str, text: str, debug_text: str | None, debug: bool
) -> None:
    """Issue 16 (8): like resources and prompts, a tool's exception text reaches the client
    only with ``debug``; ``ToolExecutionError`` is the message meant for the model."""
    options = SessionOptions(debug=debug)
    async with connected(make_server(), options=options) as (client, server_tap, _):
        result = await client.call(tool)
        assert result.is_error is True
        expected = debug_text if debug and debug_text is not None else text
        assert result.content == [t.TextContent(text=expected)]
        if not debug:
            assert b"disk is full" not in b"".join(server_tap.sent)
        await still_works(client)


@pytest.mark.parametrize("tool", ["wraps_a_cli", "interrupted", "interrupted_in_thread"])
async def test_tool_raising_system_exit_fails_only_its_call(tool: str) -> None:
    """Issue 16 (7): SystemExit / KeyboardInterrupt from a tool (sync or async) is its
    failure: an isError result, and the server keeps serving."""
    async with connected(make_server()) as (client, _, _):
        result = await client.call(tool)
        assert result.is_error is True
        assert result.content == [t.TextContent(text="Internal error")]
        await still_works(client)


async def test_resource_raising_system_exit_is_an_internal_error() -> None:
    """Issue 16 (7): the same for any handler: -32603, the session lives."""
    async with connected(make_server()) as (client, _, _):
        with pytest.raises(McpError) as info:
            await client.read_resource(t.ReadResourceRequestParams(uri="mem://exits"))
        assert info.value.code == INTERNAL_ERROR
        await still_works(client)


async def test_tool_mcp_error_passes_through_as_a_protocol_error() -> None:
    async with connected(make_server()) as (client, _, _):
        with pytest.raises(McpError) as info:
            await client.call("refuses")
        assert info.value == McpError(
            -32042, "quota exceeded", {"retryAfter": 3, "tiers": ["free"]}
        )
        await still_works(client)


async def test_invalid_tool_arguments_are_a_tool_execution_error() -> None:
    """2025-11-25 server/tools.mdx §Error Handling (changelog: SEP-1303): input validation
    errors are tool execution errors, so the model can correct its call."""
    async with connected(make_server()) as (client, _, _):
        assert client.protocol_version == "2025-11-25"
        params = t.CallToolRequestParams(name="add", arguments={"a": "one", "b": 2})
        result = await client.call_tool(params)
        assert result.is_error is True
        [content] = result.content
        assert isinstance(content, t.TextContent)
        assert content.text == (
            "Invalid arguments for tool add: Expected `int`, got `str` - at `$.a`"
        )
        await still_works(client)


async def test_invalid_tool_arguments_are_invalid_params_before_2025_11_25() -> None:
    """2025-06-18 server/tools.mdx §Error Handling lists invalid arguments as protocol errors."""
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(ServerSession(make_server(), server_end).run)
        async with Client(client_end, protocol_version="2025-06-18") as client:
            assert client.protocol_version == "2025-06-18"
            params = t.CallToolRequestParams(name="add", arguments={"a": 1})
            with pytest.raises(McpError) as info:
                await client.call_tool(params)
            assert info.value.code == -32602
            assert "Invalid arguments for tool add" in info.value.message
            assert "missing required field `b`" in info.value.message
            await still_works(client)
        tg.cancel_scope.cancel()


# ---------------------------------------------------------------------- internal errors


async def _list_prompts(client: Client) -> object:
    return await client.list_prompts()


async def _read_resource(client: Client) -> object:
    return await client.read_resource(t.ReadResourceRequestParams(uri="mem://leaky"))


async def _get_prompt(client: Client) -> object:
    return await client.get_prompt(t.GetPromptRequestParams(name="leaky_prompt"))


@pytest.mark.parametrize(
    "request_",
    [
        pytest.param(_list_prompts, id="low-level method handler"),
        pytest.param(_read_resource, id="resource function"),
        pytest.param(_get_prompt, id="prompt function"),
    ],
)
async def test_handler_exception_is_a_sanitized_internal_error(request_: Any) -> None:
    async with connected(make_server()) as (client, tap, _):
        with pytest.raises(McpError) as info:
            await request_(client)
        assert (info.value.code, info.value.message, info.value.data) == (
            INTERNAL_ERROR,
            "Internal error",
            None,
        )
        [error] = [m for m in tap.messages() if "error" in m]
        assert error["error"] == {"code": INTERNAL_ERROR, "message": "Internal error"}
        for leaked in ("hunter2", "Traceback", "settings.py", "File "):
            assert leaked.encode() not in tap.wire()
        await still_works(client)


async def test_debug_mode_names_the_exception_but_sends_no_traceback() -> None:
    async with connected(make_server(), options=SessionOptions(debug=True)) as (client, tap, _):
        with pytest.raises(McpError) as info:
            await client.get_prompt(t.GetPromptRequestParams(name="leaky_prompt"))
        assert info.value.code == INTERNAL_ERROR and info.value.message == "Internal error"
        assert info.value.data == {"exception": f"ValueError: {LEAK}"}
        # The exception's own text is what debug shows; no frames of *our* stack are added.
        wire = tap.wire().decode()
        assert "test_handler_errors.py" not in wire and "mcpbind" not in wire
        await still_works(client)


async def test_client_sampling_handler_exception_is_sanitized_too() -> None:
    """The client is a receiver as well: its handler failing is -32603 on the wire, with no
    exception text. (What the tool then makes of that error is the server's business: a
    protocol error or an ``isError`` result; either way the secret stays on the client.)"""

    async def sampling(params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        raise RuntimeError(LEAK)

    handlers = ClientHandlers(sampling=sampling)
    async with connected(make_server(), handlers=handlers) as (client, server_tap, client_tap):
        try:
            outcome: object = await client.call("asks_the_model")
        except McpError as exc:
            outcome = exc
        [error] = [m for m in client_tap.messages() if "error" in m]
        assert error["error"] == {"code": INTERNAL_ERROR, "message": "Internal error"}
        assert b"hunter2" not in client_tap.wire() + server_tap.wire()
        assert "hunter2" not in repr(outcome)
        await still_works(client)


async def test_client_notification_callback_exception_is_logged_not_fatal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen = anyio.Event()

    async def on_notification(method: str, params: object) -> None:
        seen.set()
        raise RuntimeError("callback bug")

    server = make_server()
    handlers = ClientHandlers(notification=on_notification)
    async with connected(server, handlers=handlers) as (client, _, _):
        await client.ping()  # the server has seen notifications/initialized by now
        with caplog.at_level(logging.ERROR, logger="mcpbind.connection"):
            server.tool("late")(lambda: "late")  # -> notifications/tools/list_changed
            with anyio.fail_after(5):
                await seen.wait()
            await still_works(client)
        assert "notification handler for notifications/tools/list_changed failed" in caplog.text


async def test_custom_method_handler_exception_is_a_sanitized_internal_error() -> None:
    server = make_server()

    @server.method("acme/reindex")
    async def reindex(params: Any, ctx: Context) -> Any:
        raise RuntimeError(LEAK)

    async with connected(server) as (client, tap, _):
        with pytest.raises(McpError) as info:
            await client.request("acme/reindex", {"full": True})
        assert (info.value.code, info.value.message, info.value.data) == (
            INTERNAL_ERROR,
            "Internal error",
            None,
        )
        assert b"hunter2" not in tap.wire() and b"Traceback" not in tap.wire()
        await still_works(client)


# ---------------------------------------------------------------------- McpError pass-through


@pytest.mark.parametrize("method", ["prompts/list", "acme/throttled"])
async def test_low_level_handler_mcp_error_passes_code_message_and_data(method: str) -> None:
    server = make_server()
    data = {"retryAfter": 1.5, "nested": {"ok": [1, "two", None, True]}}

    @server.method(method)
    async def throttled(params: Any, ctx: Context) -> Any:
        raise McpError(-32029, "rate limited", data)

    async with connected(server) as (client, tap, _):
        with pytest.raises(McpError) as info:
            await client.request(method)
        assert (info.value.code, info.value.message, info.value.data) == (
            -32029,
            "rate limited",
            data,
        )
        [error] = [m for m in tap.messages() if "error" in m]
        assert error["error"] == {"code": -32029, "message": "rate limited", "data": data}
        await still_works(client)


async def test_built_in_mcp_error_carries_its_data() -> None:
    """server/resources.mdx §Error Handling: resource not found is -32002 with the uri."""
    async with connected(make_server()) as (client, _, _):
        with pytest.raises(McpError) as info:
            await client.read_resource(t.ReadResourceRequestParams(uri="mem://missing"))
        assert info.value.code == -32002 and info.value.data == {"uri": "mem://missing"}
        await still_works(client)


@pytest.mark.parametrize("version", [LATEST_HANDSHAKE, LATEST_STATELESS])
async def test_mcp_error_with_unencodable_data_still_sends_code_and_message(version: str) -> None:
    """In both eras: code and message reach the client even when ``data`` cannot be encoded."""
    server = make_server()

    @server.method("prompts/list")
    async def odd(params: Any, ctx: Context) -> Any:
        raise McpError(-32050, "odd data", {"handle": object()})

    async with connected(server, protocol_version=version) as (client, _, _):
        assert client.protocol_version == version
        with pytest.raises(McpError) as info:
            await client.list_prompts()
        assert (info.value.code, info.value.message, info.value.data) == (-32050, "odd data", None)
        await still_works(client)


# ---------------------------------------------------------------------- runtime bugs


async def test_unencodable_handler_result_is_internal_error() -> None:
    server = make_server()

    @server.method("prompts/list")
    async def unencodable(params: Any, ctx: Context) -> Any:
        return {"prompts": [], "handle": object()}

    async with connected(server) as (client, _, _):
        with pytest.raises(McpError) as info:
            await client.list_prompts()
        assert (info.value.code, info.value.message) == (INTERNAL_ERROR, "Internal error")
        await still_works(client)
