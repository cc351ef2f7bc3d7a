"""server/session.py, handshake era over Streamable HTTP (2025-11-25 basic/transports.mdx,
§Listening for Messages from the Server; server/tools.mdx §List Changed Notification): a
list change made inside a handler that is still running is not a message related to that
request, so ``notifications/tools/list_changed`` goes on the session's GET stream, never on
the handler's POST response stream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest

from mcpbind import Server
from mcpbind.http import StreamableHTTPApp

from ._era_2026 import ACCEPT, LiveServer, stream_messages

pytestmark = pytest.mark.anyio

OLD = "2025-11-25"


def build() -> Server:
    server = Server("flush-context", "1.0.0")

    def added() -> str:
        return "added"

    @server.tool(description="Registers a tool, then keeps running well past the debounce")
    async def register_then_wait() -> str:
        server.tool("added_later", description="added")(added)
        await asyncio.sleep(0.4)  # the 50 ms flush happens while this request is in flight
        return "done"

    return server


@pytest.fixture
def server() -> Iterator[LiveServer]:
    live = LiveServer(StreamableHTTPApp(build(), path="/mcp")).start()
    try:
        yield live
    finally:
        live.stop()


def headers(session: str | None = None) -> dict[str, str]:
    out = {"content-type": "application/json", "accept": ACCEPT, "mcp-protocol-version": OLD}
    if session is not None:
        out["mcp-session-id"] = session
    return out


async def test_list_changed_from_a_running_handler_uses_the_get_stream(server: LiveServer) -> None:
    """The flush task must not inherit the handler's ``current_request_id``."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": OLD,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    async with httpx2.AsyncClient(timeout=10) as client:
        response = await client.post(server.url, json=init, headers=headers())
        session = response.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (
            await client.post(server.url, json=note, headers=headers(session))
        ).status_code == 202
        on_get: list[dict[str, Any]] = []
        got = anyio.Event()

        async def read_get() -> None:
            get_headers = {**headers(session), "accept": "text/event-stream"}
            async with client.stream("GET", server.url, headers=get_headers) as stream:
                assert stream.status_code == 200
                async for message in stream_messages(stream):
                    on_get.append(message)
                    got.set()

        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "register_then_wait", "arguments": {}},
        }
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_get)
            await asyncio.sleep(0.1)  # the GET stream is attached
            response = await client.post(server.url, json=call, headers=headers(session))
            on_post = [
                json.loads(line[5:])
                for line in response.text.splitlines()
                if line.startswith("data:") and line[5:].strip()
            ]
            with anyio.fail_after(5):
                await got.wait()
            tg.cancel_scope.cancel()
    assert [m.get("method") for m in on_post if "method" in m] == []
    assert on_post[-1]["id"] == 2 and on_post[-1]["result"]["content"][0]["text"] == "done"
    assert [m["method"] for m in on_get] == ["notifications/tools/list_changed"]
