"""A plain ``def`` tool runs in a worker thread: one that blocks never holds up the event loop
that serves every other request and session (2025-11-25 server/tools.mdx §Calling Tools; the
Streamable HTTP server's many concurrent sessions, basic/transports.mdx §Multiple Connections)."""

from __future__ import annotations

import threading
import time

import anyio
import pytest

from mcpbind import LATEST_HANDSHAKE, Client, ClientHandlers, Server
from mcpbind import types as t

pytestmark = pytest.mark.anyio
RELEASE_AFTER = 1.0


def make_server() -> tuple[Server, threading.Event]:
    server = Server("blocking")
    started = threading.Event()

    @server.tool()
    def slow() -> str:
        """Blocks its thread, as file or network I/O would."""
        started.set()
        time.sleep(RELEASE_AFTER)
        return "slow done"

    @server.tool()
    async def quick() -> str:
        return "quick done"

    @server.tool(thread=False)
    def inline_thread_name() -> str:
        return threading.current_thread().name

    @server.tool()
    def worker_thread_name() -> str:
        return threading.current_thread().name

    return server, started


def text_of(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


async def test_blocking_tool_does_not_stall_other_sessions() -> None:
    """Another client's call completes while a blocking tool is still sleeping."""
    server, started = make_server()
    async with Client(server) as first, Client(server) as second:
        results: dict[str, str] = {}

        async def call_slow() -> None:
            results["slow"] = text_of(await first.call_tool(t.CallToolRequestParams(name="slow")))

        async with anyio.create_task_group() as tg:
            tg.start_soon(call_slow)
            await anyio.to_thread.run_sync(started.wait, 5.0)
            begun = time.monotonic()
            quick = await second.call_tool(t.CallToolRequestParams(name="quick"))
            elapsed = time.monotonic() - begun
            assert text_of(quick) == "quick done"
            assert "slow" not in results  # the blocking tool was still running
            assert elapsed < RELEASE_AFTER / 2
        assert results["slow"] == "slow done"


async def test_thread_false_runs_on_the_event_loop() -> None:
    """``thread=False`` keeps a quick sync tool on the loop's thread; the default moves a
    sync tool to a worker thread."""
    server, _ = make_server()
    async with Client(server) as client:
        inline = await client.call_tool(t.CallToolRequestParams(name="inline_thread_name"))
        worker = await client.call_tool(t.CallToolRequestParams(name="worker_thread_name"))
    assert text_of(inline) == threading.main_thread().name
    assert text_of(worker) != threading.main_thread().name


async def test_change_made_in_a_worker_thread_reaches_the_client() -> None:
    """2025-11-25 server/tools.mdx §List Changed Notification: a plain ``def`` tool that
    registers another tool runs in a worker thread; the session still sends
    ``notifications/tools/list_changed`` (the change is handed to its event loop)."""
    server, _ = make_server()

    @server.tool()
    def add_tool() -> str:
        server.tool(name="added")(lambda: "added")
        return "ok"

    changed = anyio.Event()

    async def on_notification(method: str, params: object) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    handlers = ClientHandlers(notification=on_notification)
    async with Client(server, handlers=handlers, protocol_version=LATEST_HANDSHAKE) as client:
        result = await client.call_tool(t.CallToolRequestParams(name="add_tool"))
        assert text_of(result) == "ok"
        with anyio.fail_after(5):
            await changed.wait()
        names = [tool.name async for tool in client.iter_tools()]
    assert "added" in names
