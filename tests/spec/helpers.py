"""Plumbing shared by the spec tests: wire recording, raw peers, journal polling."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from mcpbind import LATEST_HANDSHAKE, Client, Server, json_value
from mcpbind.protocol import SessionOptions
from mcpbind.server import ServerSession
from mcpbind.transports import StdioClientTransport, Transport, memory_pair

from .servers import build

SERVERS_SCRIPT = str(Path(__file__).with_name("servers.py"))


def spawn(*args: str) -> Any:
    """``StdioClientTransport.spawn`` of this directory's servers.py with ``args`` (with our
    ``PYTHONPATH``, so a checkout's own code is what the server runs)."""
    path = os.environ.get("PYTHONPATH")
    env = {"PYTHONPATH": path} if path else None
    return StdioClientTransport.spawn(sys.executable, [SERVERS_SCRIPT, *args], env=env)


class Recorder:
    """Wraps a transport and keeps every message (decoded) it sends and receives."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.sent: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []

    async def send(self, message: bytes) -> None:
        self.sent.append(json.loads(message))
        await self.inner.send(message)

    async def receive(self) -> bytes:
        message = await self.inner.receive()
        self.received.append(json.loads(message))
        return message

    async def aclose(self) -> None:
        await self.inner.aclose()

    def received_methods(self) -> list[str]:
        return [m["method"] for m in self.received if "method" in m]

    def sent_methods(self) -> list[str]:
        return [m["method"] for m in self.sent if "method" in m]

    def responses_to(self, request_id: Any) -> list[dict[str, Any]]:
        return [m for m in self.sent if "method" not in m and m.get("id") == request_id]


@asynccontextmanager
async def memory_session(
    server: Server | str = "full",
    *,
    session_options: SessionOptions | None = None,
    **client_options: Any,
) -> AsyncIterator[tuple[Client, ServerSession, Recorder]]:
    """A client connected in memory to ``server``, with the server's session and a recorder of
    the server's side of the wire (``received`` = what the client sent). The handshake era
    unless ``protocol_version`` says otherwise: these are its spec pages."""
    client_options.setdefault("protocol_version", LATEST_HANDSHAKE)
    app = build(server) if isinstance(server, str) else server
    client_end, server_end = memory_pair()
    wire = Recorder(server_end)
    session = ServerSession(app, wire, options=session_options)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        try:
            async with Client(client_end, **client_options) as client:
                yield client, session, wire
        finally:
            tg.cancel_scope.cancel()


@asynccontextmanager
async def raw_connection(transport: str, server: str = "full") -> AsyncIterator[Transport]:
    """A bare transport to ``server`` (no client session): the test speaks JSON-RPC itself."""
    if transport == "stdio":
        async with spawn(server) as tr:
            yield tr
        return
    app = build(server)  # first: a server that fails to build leaves no streams open
    client_end, server_end = memory_pair()
    session = ServerSession(app, server_end)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        try:
            yield client_end
        finally:
            await client_end.aclose()
            tg.cancel_scope.cancel()


async def exchange(transport: Transport, message: dict[str, Any]) -> dict[str, Any]:
    """Send one request and return the next message (its response, in these tests)."""
    await transport.send(json.dumps(message).encode())
    with anyio.fail_after(5):
        reply: dict[str, Any] = json.loads(await transport.receive())
    return reply


def initialize_message(request_id: int = 1, version: str = "2025-11-25") -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "raw-client", "version": "0"},
    }
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


async def raw_handshake(transport: Transport) -> None:
    """Initialize a raw connection (request, result, notifications/initialized)."""
    reply = await exchange(transport, initialize_message(0))
    assert "result" in reply, reply
    await transport.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')


async def journal(client: Client) -> list[dict[str, Any]]:
    result = await client.call("journal_entries")
    structured = json_value(result.structured_content)
    assert isinstance(structured, dict)
    entries: list[dict[str, Any]] = structured["result"]
    return entries


async def wait_journal(
    client: Client, predicate: Callable[[dict[str, Any]], bool], timeout: float = 5.0
) -> dict[str, Any]:
    """Poll the server's journal until an entry matches (handlers run concurrently)."""
    with anyio.fail_after(timeout):
        for _ in range(10_000):
            for entry in await journal(client):
                if predicate(entry):
                    return entry
            await anyio.sleep(0.02)
    raise AssertionError("unreachable")


class Notes:
    """A ``ClientHandlers.notification`` callback that keeps what arrived."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any]] = []

    async def __call__(self, method: str, params: Any) -> None:
        self.items.append((method, params))

    def methods(self) -> list[str]:
        return [method for method, _ in self.items]

    def count(self, method: str) -> int:
        return self.methods().count(method)


def text_of(result: Any) -> str:
    """The text of a result's single text content block."""
    (block,) = result.content
    text: str = block.text
    return text


async def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll ``condition`` (something another task updates) until it holds."""
    with anyio.fail_after(timeout):
        for _ in range(100_000):
            if condition():
                return
            await anyio.sleep(0.01)


async def settle(client: Client, notes: Notes, method: str, count: int = 1) -> None:
    """Wait until ``count`` ``method`` notifications arrived, then long enough for a stray
    extra one (list_changed is debounced by 50 ms) to arrive as well."""
    await wait_until(lambda: notes.count(method) >= count)
    await anyio.sleep(0.3)
    await client.ping()
