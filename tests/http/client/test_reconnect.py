"""The Streamable HTTP client when its server dies: basic/transports.mdx §Streamable HTTP
(Sending Messages to the Server: a request gets a response or an error) and §Session
Management (point 4: a 404 for the session means start a new one with ``initialize``).

A request the server was answering when it died fails with ``ConnectionClosed`` (never a
``PeerError`` about HTTP internals); the transport waits for the server with backoff for
``reconnect_timeout``; a server that comes back (a restart: none of its sessions) answers
404 and the client re-initializes, so the next call succeeds; one that stays away closes the
transport and every call gets ``ConnectionClosed``."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpbind import Client, ConnectionClosed, PeerError, types
from mcpbind.http.client import connect_http

from ._support import server

pytestmark = pytest.mark.anyio
ERA = "2025-11-25"


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def rpc_methods(log: list[dict[str, Any]]) -> list[str]:
    return [e["rpc"] for e in log if e["http"] == "POST" and e.get("rpc")]


async def test_server_dying_before_response_headers_is_connection_closed() -> None:
    """The server reads the request and exits before any response header: the call raises
    ``ConnectionClosed`` (not ``PeerError -32000 ... RemoteProtocolError``); with the server
    gone for good, the transport closes after ``reconnect_timeout`` and later calls raise
    ``ConnectionClosed`` too, within that bound."""
    with server("fault") as srv:
        transport = connect_http(srv.base + "/mcp", reconnect_timeout=1.0)
        async with Client(transport, protocol_version=ERA, timeout=30) as client:
            with pytest.raises(ConnectionClosed) as died:
                await client.call("die", check_output=False)
            assert not isinstance(died.value, PeerError)
            assert "before answering" in died.value.message
            # Later calls fail with ConnectionClosed too (a pooled connection to the dead
            # server may break the same way), and within ~1 s the server is declared
            # unreachable: the transport is closed.
            errors: list[ConnectionClosed] = []
            with anyio.fail_after(8):  # bounded: 1 s of probes, plus slack
                while not errors or "unreachable" not in errors[-1].message:
                    with pytest.raises(ConnectionClosed) as later:
                        await client.call("json", check_output=False)
                    errors.append(later.value)
            assert "unreachable" in errors[-1].message and "for 1s" in errors[-1].message


async def test_client_survives_a_crash_and_restart() -> None:
    """§Session Management point 4: the server is killed mid-session and started again on
    the same port with no sessions; the client waits for it, gets 404, re-initializes, and
    the next call succeeds."""
    with server("fault") as first:
        port = int(first.base.rsplit(":", 1)[1])
        transport = connect_http(first.base + "/mcp", reconnect_timeout=20.0)
        async with Client(transport, protocol_version=ERA, timeout=30) as client:
            assert text_of(await client.call("json", check_output=False)) == "json"
            first.kill()
            with server("fault", port=port) as second:
                with anyio.fail_after(20):
                    result = await client.call("json", check_output=False)
                assert text_of(result) == "json"
                methods = rpc_methods(second.log())
    # The call may first meet the old session (404), then the session is renewed once.
    assert methods.count("initialize") == 1
    assert methods[-1] == "tools/call"
    assert methods.index("initialize") < methods.index("notifications/initialized")


async def test_call_while_the_server_is_down_waits_for_it() -> None:
    """A call made while nothing listens (nothing reached the server, so it is safe to send
    again) waits for the restart instead of failing, then goes through a new session."""
    with server("fault") as first:
        port = int(first.base.rsplit(":", 1)[1])
        transport = connect_http(first.base + "/mcp", reconnect_timeout=20.0)
        async with Client(transport, protocol_version=ERA, timeout=30) as client:
            await client.call("json", check_output=False)
            first.kill()
            answers: list[str] = []
            answered = anyio.Event()

            async def call() -> None:
                answers.append(text_of(await client.call("json", check_output=False)))
                answered.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await anyio.sleep(0.5)  # the call is waiting for the server
                assert answers == []
                with server("fault", port=port), anyio.fail_after(20):
                    await answered.wait()
    assert answers == ["json"]


@pytest.mark.parametrize("kind", ["official", "official-json"])
async def test_survives_official_sdk_server_killed_and_restarted(kind: str) -> None:
    """Interop: the official Python SDK's Streamable HTTP server (``mcp`` 2.3.0, SSE and JSON
    answers) is killed mid-session and started again on the same port; the next call from
    mcpbind's client succeeds after re-initialization (§Session Management point 4)."""
    pytest.importorskip("mcp", reason="the official MCP SDK (`mcp`) is not installed")
    with server(kind) as first:
        port = int(first.base.rsplit(":", 1)[1])
        transport = connect_http(first.base + "/mcp", reconnect_timeout=20.0)
        async with Client(transport, protocol_version=ERA, timeout=30) as client:
            assert text_of(await client.call("add", {"a": 1, "b": 2})) == "3"
            old_session = transport_session(client)
            first.kill()
            with server(kind, port=port), anyio.fail_after(20):
                assert text_of(await client.call("add", {"a": 2, "b": 3})) == "5"
                assert text_of(await client.call("echo", {"text": "again"})) == "again"
            assert transport_session(client) not in (None, old_session)


def transport_session(client: Client) -> str | None:
    session = getattr(client._transport, "session_id", None)
    return session if isinstance(session, str) else None
