"""The gateway writes each progress notification of an upstream call before the call's result
(2025-11-25 basic/utilities/progress.mdx §Behavior Requirements: progress notifications "MUST
only reference tokens that ... are associated with an in-progress operation"; a client such as
the TypeScript SDK drops one that comes after the result).

The gateway forwards an upstream progress notification from the upstream connection's read
loop, which reads the upstream's next message (here, the result) only once the forwarded
notification is written. Each test holds the gateway's downstream write of the last step, lets
every task run until it waits, and shows that the result has not overtaken it: with the
upstream's result already sent (in memory: the read loop's ``receive`` path), and with the last
step and the result in one chunk (stdio: its pump path, ``Connection._take``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcpbind import Client, Context, Server
from mcpbind.host import Host
from mcpbind.server import ServerSession
from mcpbind.server.options import StatelessOptions
from mcpbind.transports import Transport, memory_pair
from mcpbind.versions import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    LATEST_STATELESS,
    STATELESS_VERSIONS,
)
from mcpbind_types._common import RequestOptions

from .helpers import stdio, text_of
from .servers import READ_ONLY

pytestmark = pytest.mark.anyio

ERAS = [LATEST_HANDSHAKE, LATEST_STATELESS]
LAST = 3  # the step whose forwarding is held


class Downstream:
    """The gateway's end of its downstream connection: records what the gateway writes, in
    order, and holds the write of the last progress step until :attr:`release` is set."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.written: list[dict[str, Any]] = []
        self.holding = anyio.Event()
        self.release = anyio.Event()

    async def send(self, message: bytes) -> None:
        decoded = json.loads(message)
        progress = decoded.get("method") == "notifications/progress"
        if progress and decoded["params"]["progress"] == LAST:
            self.holding.set()
            await self.release.wait()
        self.written.append(decoded)
        await self.inner.send(message)

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()

    def count_flow(self) -> list[str]:
        """The progress notifications and the ``count`` result written, in order."""
        flow = []
        for message in self.written:
            if message.get("method") == "notifications/progress":
                flow.append(f"progress {message['params']['progress']:g}")
            elif "counted 3" in json.dumps(message.get("result", {})):
                flow.append("result")
        return flow


class Upstream:
    """The upstream server's end in memory: :attr:`answered` is set once a result of
    ``count`` is sent (it waits for the gateway to read it)."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.answered = anyio.Event()

    async def send(self, message: bytes) -> None:
        await self.inner.send(message)
        if b"counted 3" in message and b'"result"' in message:
            self.answered.set()

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


def counter(era: str) -> Server:
    """``count``: steps 1 to 3 and its result, sent one after the other without a pause."""
    server = Server("counter", version="1.0.0")
    server.stateless = StatelessOptions(
        versions=HANDSHAKE_VERSIONS if era == "handshake" else STATELESS_VERSIONS
    )

    @server.tool(annotations=READ_ONLY)
    async def count(ctx: Context) -> str:
        for i in (1, 2, 3):
            await ctx.report_progress(i, 3)
        return "counted 3"

    return server


def in_memory(server: Server, upstream: list[Upstream]) -> Callable[[], Any]:
    """A connector serving ``server`` in memory; each connection's upstream end is appended to
    ``upstream``."""

    @asynccontextmanager
    async def connect() -> AsyncIterator[Transport]:
        client_end, server_end = memory_pair()
        end = Upstream(server_end)
        upstream.append(end)
        async with anyio.create_task_group() as tg:
            tg.start_soon(ServerSession(server, end).run)
            try:
                yield client_end
            finally:
                tg.cancel_scope.cancel()

    return connect


async def call_with_the_last_step_held(
    host: Host, version: str, upstream_answered: Callable[[], Awaitable[Any]]
) -> tuple[Downstream, list[float], str]:
    """Call ``u__count`` through ``host``'s gateway with the last step's downstream write held
    until the upstream answered and every task waits; then check that the result was not
    written meanwhile, and release it. Returns the downstream end, the steps the caller saw
    and the result's text."""
    server = host.as_server()
    client_end, gateway_end = memory_pair()
    downstream = Downstream(gateway_end)
    seen: list[float] = []
    texts: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    async with host, anyio.create_task_group() as tg:
        tg.start_soon(ServerSession(server, downstream).run)
        async with Client(client_end, protocol_version=version) as client:

            async def call() -> None:
                options = RequestOptions(on_progress=progress)
                texts.append(text_of(await client.call("u__count", {}, options=options)))

            with anyio.fail_after(10):
                async with anyio.create_task_group() as calls:
                    calls.start_soon(call)
                    await downstream.holding.wait()
                    await upstream_answered()
                    await anyio.wait_all_tasks_blocked()
                    # Everything that could run has run: the result has not overtaken the step.
                    assert downstream.count_flow() == ["progress 1", "progress 2"]
                    downstream.release.set()
        tg.cancel_scope.cancel()
    return downstream, seen, texts[0]


@pytest.mark.parametrize("upstream_era", ["handshake", "stateless"])
@pytest.mark.parametrize("version", ERAS)
async def test_the_result_waits_for_the_last_progress_in_memory(
    version: str, upstream_era: str
) -> None:
    """The upstream has sent its result while the last step's forward is held."""
    ends: list[Upstream] = []
    host = Host({"u": in_memory(counter(upstream_era), ends)})

    async def answered() -> None:
        await ends[-1].answered.wait()

    downstream, seen, text = await call_with_the_last_step_held(host, version, answered)
    assert downstream.count_flow() == ["progress 1", "progress 2", "progress 3", "result"]
    assert seen == [1, 2, 3] and text == "counted 3"


@pytest.mark.parametrize("version", ERAS)
async def test_the_result_waits_for_the_last_progress_read_with_it(version: str) -> None:
    """Over stdio the upstream writes the last step and its result in one write: the gateway
    reads them in one chunk, and the result still goes out after the step."""
    host = Host({"u": stdio("together")})
    downstream, seen, text = await call_with_the_last_step_held(
        host, version, anyio.lowlevel.checkpoint
    )
    assert downstream.count_flow() == ["progress 1", "progress 2", "progress 3", "result"]
    assert seen == [1, 2, 3] and text == "counted 3"
