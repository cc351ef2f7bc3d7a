"""basic/lifecycle.mdx (2024-11-05, 2025-03-26, 2025-11-25): initialization, version
negotiation, capability and info exchange, the pre-initialization gate, shutdown."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpbind import HANDSHAKE_VERSIONS, LATEST_HANDSHAKE, Client, UnsupportedVersion, json_value
from mcpbind import types as t
from mcpbind.protocol import INVALID_REQUEST, LocalProtocolError, Session
from mcpbind.transports import Transport, TransportClosed, memory_pair

from .conftest import Connect
from .helpers import exchange, initialize_message, memory_session, raw_connection, spawn
from .servers import BOGUS_VERSION, build, raw_replies

pytestmark = pytest.mark.anyio

RawServer = Callable[[str], Any]


@pytest.fixture
def raw_server(transport: str) -> RawServer:
    """A hand-written server answering ``initialize`` with a given version. Yields the client's
    transport and a function returning the methods the server saw (``EOF`` once the client
    disconnected); call it after the context exits."""

    @asynccontextmanager
    async def open_raw(version: str) -> AsyncIterator[tuple[Transport, Callable[[], list[str]]]]:
        if transport == "stdio":
            async with spawn("raw-version", version) as stdio:
                yield stdio, lambda: _stderr_methods(stdio.stderr_tail)
            return
        seen: list[str] = []
        client_end, server_end = memory_pair()

        async def serve() -> None:
            try:
                while True:
                    message = json.loads(await server_end.receive())
                    seen.append(message.get("method"))
                    for reply in raw_replies(message, version):
                        await server_end.send(json.dumps(reply).encode())
            except TransportClosed:
                seen.append("EOF")
            finally:
                await server_end.aclose()

        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            yield client_end, lambda: seen
            await client_end.aclose()

    return open_raw


def _stderr_methods(tail: bytes) -> list[str]:
    lines = tail.decode().splitlines()
    return [line.removeprefix("received ") for line in lines if line.startswith("received ")]


@pytest.mark.memory_only
async def test_client_offers_its_latest_version() -> None:
    """lifecycle.mdx §Version Negotiation: the client MUST send a version it supports, and
    SHOULD send its latest; §Initialization: the request carries clientInfo and capabilities,
    and the client then sends notifications/initialized."""
    async with memory_session("full", name="probe", version="9.9") as (client, session, wire):
        await client.ping()
    init = wire.received[0]
    assert init["method"] == "initialize"
    assert init["params"]["protocolVersion"] == LATEST_HANDSHAKE == HANDSHAKE_VERSIONS[0]
    assert init["params"]["clientInfo"] == {"name": "probe", "version": "9.9"}
    assert init["params"]["capabilities"] == {}
    assert wire.received_methods()[:3] == ["initialize", "notifications/initialized", "ping"]
    assert session.initialized.is_set()


@pytest.mark.memory_only
@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
async def test_server_answers_the_requested_version(connect: Connect, version: str) -> None:
    """lifecycle.mdx §Version Negotiation: "If the server supports the requested protocol
    version, it MUST respond with the same version" (every handshake-era revision)."""
    async with connect("full", protocol_version=version) as client:
        assert client.protocol_version == version
        assert (await client.call("echo", {"text": "ok"})).is_error is not True


async def test_server_answers_its_latest_for_an_unknown_version(connect: Connect) -> None:
    """lifecycle.mdx §Version Negotiation: "Otherwise, the server MUST respond with another
    protocol version it supports. This SHOULD be the latest version supported by the server"."""
    async with connect("full", protocol_version="2099-12-31") as client:
        assert client.protocol_version == LATEST_HANDSHAKE
        await client.ping()


async def test_client_accepts_an_older_version_it_supports(raw_server: RawServer) -> None:
    """lifecycle.mdx §Version Negotiation: the server may answer another version than the one
    offered; a client that supports it carries on (and sends notifications/initialized)."""
    async with (
        raw_server("2025-03-26") as (peer, seen),
        Client(peer, protocol_version=LATEST_HANDSHAKE) as client,
    ):
        assert client.protocol_version == "2025-03-26"
        assert client.server_info is not None and client.server_info.name == "raw"
        await client.ping()
    assert seen() == ["initialize", "notifications/initialized", "ping", "EOF"]


async def test_client_refuses_an_unsupported_version(raw_server: RawServer) -> None:
    """lifecycle.mdx §Version Negotiation: "If the client does not support the version in the
    server's response, it SHOULD disconnect" -- with a clear error, and without sending
    notifications/initialized."""
    async with raw_server(BOGUS_VERSION) as (peer, seen):
        with pytest.raises(UnsupportedVersion) as caught:
            async with Client(peer, protocol_version=LATEST_HANDSHAKE):
                pytest.fail("the session must not open")
    error = caught.value
    assert BOGUS_VERSION in error.message
    assert all(v in error.message for v in HANDSHAKE_VERSIONS)
    assert error.data == {"supported": list(HANDSHAKE_VERSIONS), "requested": BOGUS_VERSION}
    assert seen() == ["initialize", "EOF"]  # initialize, then the client hung up


async def test_info_capabilities_and_instructions_are_exchanged(connect: Connect) -> None:
    """lifecycle.mdx §Initialization / §Capability Negotiation: the result carries serverInfo,
    capabilities and instructions; the server learns clientInfo and the client capabilities."""
    async with connect("full", name="spec-client", version="4.5.6") as client:
        info = client.server_info
        assert info is not None
        assert (info.name, info.version, info.title) == ("spec-full", "1.2.3", "Spec test server")
        assert client.instructions == "Use the tools."
        assert client.server_capabilities == t.ServerCapabilities(
            tools=t.ServerCapabilitiesTools(list_changed=True),
            resources=t.ServerCapabilitiesResources(list_changed=True, subscribe=True),
            prompts=t.ServerCapabilitiesPrompts(list_changed=True),
            logging={},
            completions={},
        )
        seen = json_value((await client.call("whoami")).structured_content)
    assert seen == {
        "client": {"name": "spec-client", "version": "4.5.6"},
        "capabilities": {},
        "version": LATEST_HANDSHAKE,
    }


async def test_requests_before_initialize_are_refused(transport: str) -> None:
    """lifecycle.mdx §Initialization: "The client SHOULD NOT send requests other than pings
    before the server has responded to the initialize request"; the server refuses them
    (-32600) but answers ping, then initializes normally."""
    async with raw_connection(transport) as peer:
        early = await exchange(peer, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert early["id"] == 1
        assert early["error"]["code"] == INVALID_REQUEST
        assert "not initialized" in early["error"]["message"]
        assert await exchange(peer, {"jsonrpc": "2.0", "id": 2, "method": "ping"}) == {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {},
        }
        init = await exchange(peer, initialize_message(3))
        assert init["result"]["protocolVersion"] == LATEST_HANDSHAKE
        await peer.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        listed = await exchange(peer, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
        assert "echo" in [tool["name"] for tool in listed["result"]["tools"]]


@pytest.mark.memory_only
async def test_a_second_initialize_is_refused(transport: str) -> None:
    """lifecycle.mdx §Initialization: initialization is the first interaction and happens
    once; a repeated initialize is an invalid request."""
    async with raw_connection(transport) as peer:
        assert "result" in await exchange(peer, initialize_message(1))
        await peer.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        again = await exchange(peer, initialize_message(2))
    assert again["id"] == 2
    assert again["error"]["code"] == INVALID_REQUEST


async def test_client_cannot_send_before_initializing() -> None:
    """lifecycle.mdx §Initialization: the client sends nothing but initialize and ping before
    the handshake; an unopened Client and a fresh protocol core refuse locally."""
    with pytest.raises(RuntimeError, match="async with"):
        await Client(build("full")).list_tools()
    core = Session("client")
    with pytest.raises(LocalProtocolError, match="before initialization completes"):
        core.send_request("tools/list")
    core.send_request("ping")  # allowed before initialization


async def test_stdio_shutdown_closes_stdin_and_the_server_exits() -> None:
    """lifecycle.mdx §Shutdown §stdio: the client closes the server's input stream and waits;
    the server exits on its own (status 0), no SIGTERM or SIGKILL needed."""
    async with spawn("full") as stdio, Client(stdio) as client:
        await client.ping()
    assert stdio.returncode == 0
