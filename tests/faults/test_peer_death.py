"""A peer that dies fails what is pending at once, with ``McpError``; nothing hangs.

2025-11-25 basic/lifecycle.mdx §Shutdown (stdio: the server exiting ends the connection) and
§Timeouts (requests must not wait forever); basic/transports.mdx §stdio. mcpbind reports a
lost connection as ``McpError`` with the local code ``CONNECTION_CLOSED`` (-32000).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from mcpbind import (
    LATEST_HANDSHAKE,
    Client,
    McpError,
    RequestOptions,
    RequestTimeout,
    json_value,
)
from mcpbind.protocol import CONNECTION_CLOSED
from mcpbind.server.session import ServerSession
from mcpbind.transports import (
    MemoryTransport,
    StdioClientTransport,
    TransportClosed,
    memory_pair,
)

from .fault_server import server

pytestmark = pytest.mark.anyio

SERVER = str(Path(__file__).with_name("fault_server.py"))


async def fail_running_call(client: Client, kill: Callable[[], Awaitable[None]]) -> McpError:
    """Start a 30 s ``sleep`` call; once the server reports it running, ``kill`` the server.

    Return the error the call failed with, after checking it failed within one second.
    """
    running = anyio.Event()
    outcome: list[tuple[float, BaseException]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        running.set()

    async def run_call() -> None:
        try:
            options = RequestOptions(on_progress=on_progress)
            await client.call("sleep", {"seconds": 30}, options=options)
        except Exception as exc:
            outcome.append((anyio.current_time(), exc))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_call)
            await running.wait()
            killed_at = anyio.current_time()
            await kill()
    [(failed_at, error)] = outcome
    assert isinstance(error, McpError), repr(error)
    assert failed_at - killed_at < 1.0, f"the pending call took {failed_at - killed_at:.3f}s"
    assert error.code == CONNECTION_CLOSED
    assert client.connection is not None and client.connection.closed
    assert client.connection.core.pending_ids() == []
    assert client.connection._waiters == {}
    return error


# ---------------------------------------------------------------------- stdio


@asynccontextmanager
async def fault_server(**env: str) -> AsyncIterator[StdioClientTransport]:
    async with StdioClientTransport.spawn(
        sys.executable, [SERVER], env=env, close_timeout=0.5, terminate_timeout=0.5
    ) as transport:
        yield transport


async def test_sigkill_mid_call_fails_the_pending_call_within_a_second() -> None:
    async with fault_server() as transport, Client(transport) as client:
        assert json_value((await client.call("add", {"a": 1, "b": 2})).structured_content) == {
            "result": 3
        }

        async def kill() -> None:
            os.kill(transport.pid, signal.SIGKILL)

        error = await fail_running_call(client, kill)
        assert "was killed by SIGKILL" in error.message
        # Later calls fail at once with the same kind of error, and leaving is prompt.
        with anyio.fail_after(1), pytest.raises(McpError) as later:
            await client.call("add", {"a": 1, "b": 2})
        assert later.value.code == CONNECTION_CLOSED
    assert transport.returncode == -signal.SIGKILL


async def test_server_exiting_during_the_handshake_is_a_clear_error() -> None:
    async with fault_server(MCPBIND_FAULTS_MODE="die-on-initialize") as transport:
        with anyio.fail_after(5), pytest.raises(McpError) as info:
            async with Client(transport):
                pytest.fail("the handshake cannot succeed")
    assert info.value.code == CONNECTION_CLOSED
    assert f"server process {transport.pid} exited with code 3" in info.value.message
    assert "dying during the handshake" in info.value.message  # the stderr tail


@asynccontextmanager
async def exited_server() -> AsyncIterator[StdioClientTransport]:
    """A server process that has already exited (status 7) before the client says anything."""
    command = ["-c", "import sys; print('bad config', file=sys.stderr); sys.exit(7)"]
    async with StdioClientTransport.spawn(sys.executable, command) as transport:
        with anyio.fail_after(5):
            while transport.returncode is None:  # noqa: ASYNC110 - waiting for the exit is the point
                await anyio.sleep(0.01)
        yield transport


async def test_server_gone_before_the_handshake_is_a_clear_error() -> None:
    async with exited_server() as transport:
        with anyio.fail_after(5), pytest.raises((McpError, TransportClosed)) as info:
            async with Client(transport):
                pytest.fail("the handshake cannot succeed")
    assert f"server process {transport.pid} exited with code 7" in str(info.value)
    assert "bad config" in str(info.value)  # the stderr tail explains why


async def test_handshake_with_an_exited_server_raises_mcp_error() -> None:
    """The error type of a lost connection should not depend on whether the send or the
    receive noticed first (see test_sending_to_a_dead_peer_is_an_mcp_error)."""
    async with exited_server() as transport:
        with anyio.fail_after(5), pytest.raises(McpError) as info:
            async with Client(transport):
                pytest.fail("the handshake cannot succeed")
    assert info.value.code == CONNECTION_CLOSED


async def test_spawn_does_not_wrap_errors_in_exception_groups() -> None:
    with anyio.fail_after(5), pytest.raises(McpError):
        async with (
            fault_server(MCPBIND_FAULTS_MODE="die-on-initialize") as transport,
            Client(transport),
        ):
            pass


# ---------------------------------------------------------------------- in memory


@asynccontextmanager
async def memory_session() -> AsyncIterator[tuple[Client, MemoryTransport, anyio.CancelScope]]:
    """A Client connected in memory to ``server``; yields the server's end and task scope."""
    client_end, server_end = memory_pair()
    server_scope = anyio.CancelScope()
    session = ServerSession(server, server_end)
    async with anyio.create_task_group() as tg:

        async def run_server() -> None:
            with server_scope:
                await session.run()

        tg.start_soon(run_server)
        async with Client(client_end) as client:
            yield client, server_end, server_scope
        server_scope.cancel()


async def test_closing_the_server_end_fails_the_pending_call_within_a_second() -> None:
    async with memory_session() as (client, server_end, _):
        error = await fail_running_call(client, server_end.aclose)
        assert error.message == "Connection closed: peer closed"


async def test_server_task_dying_fails_the_pending_call_within_a_second() -> None:
    async with memory_session() as (client, _, server_scope):

        async def kill() -> None:
            server_scope.cancel()

        await fail_running_call(client, kill)


async def test_memory_server_closing_during_the_handshake_is_a_clear_error() -> None:
    client_end, server_end = memory_pair()

    async def die_on_initialize() -> None:
        await server_end.receive()
        await server_end.aclose()

    async with anyio.create_task_group() as tg:
        tg.start_soon(die_on_initialize)
        with anyio.fail_after(5), pytest.raises(McpError) as info:
            async with Client(client_end):
                pytest.fail("the handshake cannot succeed")
    assert info.value.code == CONNECTION_CLOSED
    assert "peer closed" in info.value.message


async def test_silent_server_times_the_handshake_out() -> None:
    """lifecycle.mdx §Timeouts: a server that reads and never answers is not a hang either."""
    client_end, server_end = memory_pair()

    async def swallow() -> None:
        with pytest.raises(TransportClosed):
            while True:
                await server_end.receive()

    async with anyio.create_task_group() as tg:
        tg.start_soon(swallow)
        with anyio.fail_after(5), pytest.raises(RequestTimeout) as info:
            handshake = Client(client_end, timeout=0.2, protocol_version=LATEST_HANDSHAKE)
            async with handshake:
                pytest.fail("the handshake cannot succeed")
        await server_end.aclose()
    assert "initialize timed out" in info.value.message


class BrokenSend:
    """Wraps a transport; once ``broken``, send fails like a dead peer while receive waits."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.broken = False

    async def send(self, message: bytes) -> None:
        if self.broken:
            raise TransportClosed("server process 4242 was killed by SIGKILL")
        await self.inner.send(message)

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_sending_to_a_dead_peer_is_an_mcp_error() -> None:
    client_end, server_end = memory_pair()
    broken = BrokenSend(client_end)
    async with anyio.create_task_group() as tg:
        tg.start_soon(ServerSession(server, server_end).run)
        async with Client(broken) as client:
            broken.broken = True
            with anyio.fail_after(5), pytest.raises(McpError) as info:
                await client.call("add", {"a": 1, "b": 2})
            assert info.value.code == CONNECTION_CLOSED
        tg.cancel_scope.cancel()
