"""Issue 28 F18: a handler's ``BaseException`` that is not a cancellation of the server
(``GeneratorExit``, ``StopIteration``, ``StopAsyncIteration``, ``KeyboardInterrupt``,
``SystemExit``, a ``CancelledError`` the handler raised itself) is its failure: an error
answer (a tool: an ``isError`` result; any other handler: -32603), its id free again, the
session serving on; for ``async def`` and ``def`` (thread) handlers, in both eras, in
memory, over stdio and as tasks. The HTTP paths: tests/http/server/test_http_base_exceptions.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.live_server import stop_process
from support.pipes import LineReader

from mcpbind import (
    LATEST_HANDSHAKE,
    LATEST_STATELESS,
    Client,
    ClientHandlers,
    Context,
    McpError,
    Server,
)
from mcpbind import types as t
from mcpbind.client import start_task

from .raising_server import KINDS, make_server

pytestmark = pytest.mark.anyio

INTERNAL_ERROR = -32603
SERVER = Path(__file__).with_name("raising_server.py")
TOOLS = [f"raise_{kind}{suffix}" for kind in KINDS for suffix in ("", "_def")]


async def serves_on(client: Client) -> None:
    result = await client.call("add", {"a": 2, "b": 3})
    assert result.is_error is not True


@pytest.mark.parametrize("version", [LATEST_HANDSHAKE, LATEST_STATELESS])
async def test_raising_tool_is_an_error_result(version: str) -> None:
    async with Client(make_server(), protocol_version=version) as client:
        for tool in TOOLS:
            with anyio.fail_after(10):
                result = await client.call(tool)
            assert result.is_error is True, tool
            assert result.content == [t.TextContent(text="Internal error")], tool
        await serves_on(client)


@pytest.mark.parametrize("version", [LATEST_HANDSHAKE, LATEST_STATELESS])
async def test_raising_resource_and_prompt_are_internal_errors(version: str) -> None:
    async with Client(make_server(), protocol_version=version) as client:
        for kind in KINDS:
            with anyio.fail_after(10), pytest.raises(McpError) as info:
                await client.read_resource(t.ReadResourceRequestParams(uri=f"raise://{kind}"))
            assert info.value.code == INTERNAL_ERROR, kind
            with anyio.fail_after(10), pytest.raises(McpError) as info:
                await client.get_prompt(t.GetPromptRequestParams(name=f"raise_{kind}"))
            assert info.value.code == INTERNAL_ERROR, kind
        await serves_on(client)


async def test_raising_task_tool_fails_its_task() -> None:
    async with Client(make_server(), protocol_version=LATEST_HANDSHAKE) as client:
        for tool in TOOLS:
            with anyio.fail_after(10):
                handle = await start_task(client, "task_" + tool, {})
                result = await handle.result()
                assert result.is_error is True, tool
                assert (await handle.status()).status == "failed", tool
        await serves_on(client)


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_stdio_answers_every_raising_handler_and_frees_its_id() -> None:
    """Over stdio each call is answered, and the same id is accepted again at once."""
    init = {
        "protocolVersion": LATEST_HANDSHAKE,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    lines = [
        _line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
    for tool in TOOLS:  # twice each, with the same id: the first answer frees it
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool}}
        lines += [_line(call)]
    process = subprocess.Popen(
        [sys.executable, str(SERVER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        reader = LineReader(process.stdout.fileno())
        process.stdin.write(lines[0] + lines[1])
        process.stdin.flush()
        assert json.loads(reader.readline())["id"] == 0
        for tool, line in zip(TOOLS, lines[2:], strict=True):
            for _ in range(2):
                process.stdin.write(line)
                process.stdin.flush()
                answer = json.loads(reader.readline())
                assert answer["id"] == 7, (tool, answer)
                assert answer["result"]["isError"] is True, (tool, answer)
        process.stdin.close()
        assert process.wait(timeout=30) == 0
    finally:
        stop_process(process)


@pytest.mark.parametrize("kind", list(KINDS))
async def test_raising_client_handler_answers_the_server(kind: str) -> None:
    """The client end shares the connection: a sampling handler raising one of these is an
    error answer to the server's request (the tool sees it), not a request left unanswered."""
    server = Server("asks")

    @server.tool()
    async def ask(ctx: Context) -> str:
        message = t.SamplingMessage(content=t.TextContent(text="hi"), role="user")
        try:
            await ctx.sample(t.CreateMessageRequestParams(max_tokens=5, messages=[message]))
        except McpError as exc:
            return f"refused {exc.code}"
        return "sampled"

    async def sample(params: Any) -> t.CreateMessageResult:
        raise KINDS[kind]

    handlers = ClientHandlers(sampling=sample)
    async with Client(server, protocol_version=LATEST_HANDSHAKE, handlers=handlers) as client:
        with anyio.fail_after(10):
            result = await client.call("ask")
        assert result.content == [t.TextContent(text=f"refused {INTERNAL_ERROR}")]
