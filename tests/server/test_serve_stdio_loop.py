"""``serve_stdio``'s event loop: uvloop when installed (``loop="auto"``), asyncio on request;
on either, a ``def`` tool that blocks never holds up the loop (2025-11-25 basic/transports.mdx
§stdio, server/tools.mdx §Calling Tools)."""

from __future__ import annotations

import os
import sys

import anyio
import pytest

from mcpbind import LATEST_HANDSHAKE, Client
from mcpbind import types as t
from mcpbind._asyncio import choose_loop, module_installed
from mcpbind.transports import StdioClientTransport

pytestmark = pytest.mark.anyio

SERVER = """
import asyncio, sys, threading
from mcpbind import Server, serve_stdio

server = Server("loops")

@server.tool()
async def loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__

started, released = threading.Event(), threading.Event()

@server.tool()
def slow() -> str:
    started.set()
    released.wait(60)  # blocks its thread until the test releases it
    return threading.current_thread().name

@server.tool()
def slow_started() -> bool:
    return started.is_set()

@server.tool()
def release() -> str:
    released.set()
    return "released"

serve_stdio(server, loop=sys.argv[1])
"""


def text_of(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


LOOPS = ["asyncio", "auto"] + (["uvloop"] if module_installed("uvloop") else [])


@pytest.mark.parametrize("loop", LOOPS)
async def test_serve_stdio_runs_the_chosen_loop_and_blocking_def_tools_beside_it(
    loop: str,
) -> None:
    expected = "uvloop" if choose_loop(loop) == "uvloop" else "asyncio"
    async with (
        StdioClientTransport.spawn(sys.executable, ["-c", SERVER, loop], env=_env()) as transport,
        Client(transport, protocol_version=LATEST_HANDSHAKE) as client,
    ):
        assert text_of(await client.call("loop_module")).split(".")[0] == expected
        slow_name: list[str] = []

        async def call_slow() -> None:
            slow_name.append(text_of(await client.call("slow")))

        async with anyio.create_task_group() as tg:
            tg.start_soon(call_slow)
            with anyio.fail_after(30):  # polled: the slow call is in its thread, blocked
                while text_of(await client.call("slow_started")) != "true":  # noqa: ASYNC110
                    await anyio.sleep(0.01)
            assert text_of(await client.call("loop_module")).split(".")[0] == expected
            assert not slow_name  # answered while `slow` still blocks its thread
            assert text_of(await client.call("release")) == "released"
        assert slow_name and slow_name[0] != "MainThread"


def test_choose_loop_rejects_an_unknown_or_missing_loop() -> None:
    assert choose_loop("asyncio") == "asyncio"
    assert choose_loop("auto", installed=lambda name: False) == "asyncio"
    with pytest.raises(ImportError, match="needs uvloop"):
        choose_loop("uvloop", installed=lambda name: False)
    with pytest.raises(ValueError, match="loop must be"):
        choose_loop("trio")


def _env() -> dict[str, str]:
    """The server imports the same mcpbind as the test (a worktree's PYTHONPATH)."""
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": path} if path else {}
