"""Plumbing for the Host tests: recorded in-memory connectors and stdio test-server configs."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from mcpbind import Server
from mcpbind.host import ServerConfig
from mcpbind.server import ServerSession
from mcpbind.transports import Transport, memory_pair

SERVERS = str(Path(__file__).with_name("servers.py"))
ROOT = Path(__file__).resolve().parents[2]


def node_binary() -> str | None:
    """Node.js from PATH, else the one the conformance suite installs (conformance/node)."""
    bundled = ROOT / "conformance" / "node" / "node_modules" / ".bin" / "node"
    return shutil.which("node") or (str(bundled) if bundled.exists() else None)


def stdio(kind: str, **extra: Any) -> ServerConfig:
    """The config of one of servers.py's servers over stdio."""
    return ServerConfig(command=sys.executable, args=[SERVERS, kind], **extra)


class Wire:
    """Every message one server received, decoded."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        #: The server side of each connection, newest last.
        self.sessions: list[ServerSession] = []

    def methods(self) -> list[str]:
        return [m["method"] for m in self.received if "method" in m]

    def text(self) -> str:
        return json.dumps(self.received)


class _Recording:
    def __init__(self, inner: Transport, wire: Wire) -> None:
        self.inner = inner
        self.wire = wire

    async def send(self, message: bytes) -> None:
        await self.inner.send(message)

    async def receive(self) -> bytes:
        message = await self.inner.receive()
        self.wire.received.append(json.loads(message))
        return message

    async def aclose(self) -> None:
        await self.inner.aclose()


def recorded(server: Server) -> tuple[Callable[[], AbstractAsyncContextManager[Transport]], Wire]:
    """A connector serving ``server`` in memory, and the record of what it receives."""
    wire = Wire()

    @asynccontextmanager
    async def connect() -> AsyncIterator[Transport]:
        client_end, server_end = memory_pair()
        session = ServerSession(server, _Recording(server_end, wire))
        wire.sessions.append(session)
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.run)
            try:
                yield client_end
            finally:
                tg.cancel_scope.cancel()

    return connect, wire


def text_of(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():  # noqa: ASYNC110 - polling state the host updates
            await anyio.sleep(0.02)
