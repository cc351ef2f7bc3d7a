"""The Streamable HTTP client transport against real uvicorn servers on 127.0.0.1.

Spec: 2025-11-25 basic/transports.mdx §Streamable HTTP. The scripted server
(fault_server.py) runs in its own process, so it can be killed mid-call.
"""

from __future__ import annotations

import itertools
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest

from mcpbind import (
    Client,
    ClientHandlers,
    ConnectionClosed,
    McpError,
    RequestOptions,
    RequestTimeout,
    types,
)
from mcpbind.http.client import StreamableHTTPTransport, connect_http
from mcpbind.http.client.legacy_sse_transport import LegacySSETransport, LegacyUnavailable
from mcpbind.transports import TransportClosed

from ._support import Running, server

pytestmark = pytest.mark.anyio
#: The handshake era these tests are about (the client default, "auto", may pick 2026-07-28).
ERA = "2025-11-25"


@pytest.fixture(scope="module")
def fault() -> Iterator[Running]:
    with server("fault") as running:
        yield running


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def session_entries(log: list[dict[str, Any]], session: str | None) -> list[dict[str, Any]]:
    return [e for e in log if e["headers"].get("mcp-session-id") == session]


class Notes:
    """Collects logging notifications (``notifications/message``) the server sends."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.arrived = anyio.Event()

    async def __call__(self, params: types.LoggingMessageNotificationParams) -> None:
        self.items.append(str(params.data))
        self.arrived.set()


async def test_json_and_sse_answers(fault: Running) -> None:
    """§Sending Messages to the Server, point 5: the client MUST support both a JSON body
    and an SSE stream (with related notifications before the response)."""
    notes = Notes()
    async with Client(
        fault.base + "/mcp", protocol_version=ERA, handlers=ClientHandlers(logging=notes)
    ) as client:
        assert client.protocol_version == "2025-11-25"
        tools = await client.list_tools()
        assert {t.name for t in tools.tools} >= {"json", "sse"}
        assert text_of(await client.call("json")) == "json"
        assert text_of(await client.call("sse")) == "sse"
        assert "progress-note" in notes.items


async def test_get_stream_delivers_server_messages_and_is_polled(fault: Running) -> None:
    """§Listening for Messages from the Server: after initialization the client opens the
    GET stream; when the server closes it after an event with ``retry``, the client
    reconnects with Last-Event-ID (§Resumability) and each message arrives once."""
    notes = Notes()
    async with Client(
        fault.base + "/mcp", protocol_version=ERA, handlers=ClientHandlers(logging=notes)
    ) as client:
        with anyio.fail_after(5):
            while len(notes.items) < 2:
                notes.arrived = anyio.Event()
                await notes.arrived.wait()
        await anyio.sleep(0.3)  # nothing else may arrive
        session = client.connection.transport.session_id  # type: ignore[union-attr]
    assert notes.items == ["hello from GET", "again from GET"]
    gets = [e["headers"] for e in session_entries(fault.log(), session) if e["http"] == "GET"]
    assert "last-event-id" not in gets[0]
    assert [g.get("last-event-id") for g in gets[1:]] == ["g-1"]


async def test_no_get_stream_when_server_answers_405(fault: Running) -> None:
    """§Listening for Messages, point 3: 405 means no stream is offered; the client does
    not retry it and requests keep working."""
    async with (
        connect_http(fault.base + "/mcp", headers={"x-no-get-stream": "1"}) as transport,
        Client(transport, protocol_version=ERA) as client,
    ):
        assert text_of(await client.call("json")) == "json"
        await anyio.sleep(0.2)
        session = transport.session_id
    gets = [e for e in session_entries(fault.log(), session) if e["http"] == "GET"]
    assert len(gets) == 1


async def test_get_stream_reconnects_with_backoff(fault: Running) -> None:
    """§Listening for Messages / §Resumability: a GET stream that keeps ending with nothing
    in it is reopened after a delay that doubles each time (0.05, 0.1, 0.2 s here), and
    after ``max_reconnect_attempts`` the client stops asking; requests keep working."""
    async with (
        connect_http(
            fault.base + "/mcp",
            headers={"x-get-empty": "1"},
            reconnect_delay=0.05,
            max_reconnect_attempts=3,
        ) as transport,
        Client(transport, protocol_version=ERA) as client,
    ):
        await anyio.sleep(0.8)  # 0.05 + 0.1 + 0.2 s of backoff, then it gives up
        assert text_of(await client.call("json")) == "json"
        await anyio.sleep(0.3)  # no further attempt comes
        session = transport.session_id
    times = [e["t"] for e in session_entries(fault.log(), session) if e["http"] == "GET"]
    assert len(times) == 4, times
    gaps = [b - a for a, b in itertools.pairwise(times)]
    # Each gap is the delay plus a round trip, so never below the delay: doubling each time.
    assert gaps[0] >= 0.05 and gaps[1] >= 0.1 and gaps[2] >= 0.2, gaps


async def test_headers_on_every_request(fault: Running) -> None:
    """§Sending Messages (Accept lists both types), §Session Management (the session id on
    every request after initialize) and §Protocol Version Header (the negotiated version on
    every subsequent request); custom headers go on every request too."""
    custom = {"x-custom": "yes", "authorization": "Bearer test-token"}
    async with (
        connect_http(fault.base + "/mcp", headers=custom) as transport,
        Client(transport, protocol_version=ERA) as client,
    ):
        seen = json.loads(text_of(await client.call("headers")))
        session = transport.session_id
    assert session is not None
    assert seen["x-custom"] == "yes"
    assert seen["authorization"] == "Bearer test-token"
    assert seen["mcp-session-id"] == session
    assert seen["mcp-protocol-version"] == "2025-11-25"
    log = fault.log()
    init = [e for e in log if e.get("rpc") == "initialize" and e["headers"].get("x-custom")]
    assert init and "mcp-session-id" not in init[-1]["headers"]
    later = session_entries(log, session)
    assert {e["http"] for e in later} >= {"POST", "GET", "DELETE"}
    for entry in later:
        assert entry["headers"]["x-custom"] == "yes"
        assert entry["headers"]["mcp-protocol-version"] == "2025-11-25"
        if entry["http"] == "POST":
            accept = entry["headers"]["accept"]
            assert "application/json" in accept and "text/event-stream" in accept
            assert entry["headers"]["content-type"] == "application/json"
        if entry["http"] == "GET":
            assert "text/event-stream" in entry["headers"]["accept"]


async def test_delete_ends_the_session_on_close(fault: Running) -> None:
    """§Session Management, point 5: a client that leaves SHOULD send DELETE."""
    async with Client(fault.base + "/mcp", protocol_version=ERA) as client:
        transport = client.connection.transport  # type: ignore[union-attr]
        assert isinstance(transport, StreamableHTTPTransport)
        session = transport.session_id
    deletes = [e for e in session_entries(fault.log(), session) if e["http"] == "DELETE"]
    assert len(deletes) == 1


async def test_caller_supplied_http_client_is_used_and_not_closed(fault: Running) -> None:
    """A caller's httpx2.AsyncClient (its own headers, pools) is used and left open.

    Spec: 2025-11-25 basic/transports.mdx §Streamable HTTP (client side).
    """
    async with httpx2.AsyncClient(headers={"x-from-client": "1"}) as http:
        async with (
            StreamableHTTPTransport(fault.base + "/mcp", client=http) as transport,
            Client(transport, protocol_version=ERA) as client,
        ):
            seen = json.loads(text_of(await client.call("headers")))
        assert seen["x-from-client"] == "1"
        assert not http.is_closed
        assert (await http.get(fault.base + "/admin/log")).status_code == 200


async def test_404_starts_a_new_session_and_retries(fault: Running) -> None:
    """§Session Management, point 4: on 404 for our session the client MUST start a new
    session with a new InitializeRequest (no session id); the failed call is retried."""
    mark = {"x-test": "renewal"}
    async with (
        connect_http(fault.base + "/mcp", headers=mark) as transport,
        Client(transport, protocol_version=ERA) as client,
    ):
        first = transport.session_id
        assert text_of(await client.call("json")) == "json"
        httpx2.post(fault.base + "/admin/expire")
        assert text_of(await client.call("json")) == "json"
        second = transport.session_id
    assert first is not None and second is not None and first != second
    log = [e for e in fault.log() if e["headers"].get("x-test") == "renewal"]
    inits = [e for e in log if e.get("rpc") == "initialize"]
    assert len(inits) == 2
    assert all("mcp-session-id" not in e["headers"] for e in inits)
    renewed = session_entries(log, second)
    rpcs = [e.get("rpc") for e in renewed if e["http"] == "POST"]
    assert rpcs[:2] == ["notifications/initialized", "tools/call"]


async def test_http_errors_become_mcp_errors(fault: Running) -> None:
    """§Sending Messages: an HTTP error answering a request reaches the caller as an
    McpError for that request (a JSON-RPC error in the body is used), never a hang."""
    async with Client(fault.base + "/mcp", protocol_version=ERA, timeout=10) as client:
        with anyio.fail_after(5):
            with pytest.raises(McpError) as err500:
                await client.call("http500")
            with pytest.raises(McpError) as err503:
                await client.call("http503")
        assert err500.value.code == -32603
        assert "HTTP 500" in err500.value.message and "boom" in err500.value.message
        assert err503.value.code == -32001
        assert "HTTP 503" in err503.value.message and "overloaded" in err503.value.message
        assert text_of(await client.call("json")) == "json"  # the session is still fine


async def test_sse_resume_after_drop_delivers_each_event_once(fault: Running) -> None:
    """§Resumability and Redelivery: after the stream breaks, the client resumes with GET
    and Last-Event-ID; every event arrives exactly once, the response included."""
    notes = Notes()
    async with Client(
        fault.base + "/mcp", protocol_version=ERA, handlers=ClientHandlers(logging=notes)
    ) as client:
        with anyio.fail_after(5):
            result = await client.call("drop")
        session = client.connection.transport.session_id  # type: ignore[union-attr]
    assert text_of(result) == "dropped and resumed"
    events = [n for n in notes.items if n.startswith("event-")]
    assert events == ["event-1", "event-2", "event-3"]
    resumes = [
        e["headers"]["last-event-id"]
        for e in session_entries(fault.log(), session)
        if e["http"] == "GET" and e["headers"].get("last-event-id", "g-").startswith("drop")
    ]  # (the standalone GET stream polls too, with ids "g-<n>")
    assert len(resumes) == 1 and resumes[0].endswith("-2")


async def test_polling_waits_for_retry(fault: Running) -> None:
    """§Sending Messages, point 6: after the server closes the connection the client MUST
    wait ``retry`` milliseconds (300 here) before reconnecting with Last-Event-ID."""
    async with Client(fault.base + "/mcp", protocol_version=ERA) as client:
        start = time.monotonic()
        result = await client.call("poll")
        elapsed = time.monotonic() - start
    assert text_of(result) == "polled"
    assert 0.28 <= elapsed < 5.0  # the 300 ms wait is the feature; a loaded-machine margin


async def test_killed_server_fails_pending_call_within_a_second() -> None:
    """A dead server is a clear error, never a hang: the pending call fails with
    ConnectionClosed in under a second, and every later call once the server stayed away
    for ``reconnect_timeout`` (test_reconnect.py: it may come back before).

    Spec: 2025-11-25 basic/transports.mdx §Resumability and Redelivery (nothing to resume
    from a dead server).
    """
    with server("fault") as srv:
        url = srv.base + "/mcp"
        transport = connect_http(url, reconnect_timeout=0.5)
        async with Client(transport, protocol_version=ERA, timeout=30) as client:
            failed_at: list[float] = []

            async def pending() -> None:
                with pytest.raises(ConnectionClosed):
                    await client.call("hang")
                failed_at.append(time.monotonic())

            async with anyio.create_task_group() as tg:
                tg.start_soon(pending)
                await anyio.sleep(0.3)
                killed_at = time.monotonic()
                srv.kill()
            assert failed_at and failed_at[0] - killed_at < 1.0
            with pytest.raises(ConnectionClosed, match=r"unreachable .* for 0\.5s"):
                await client.call("json")


async def test_unreachable_url_is_a_clear_error() -> None:
    """Nothing listening: connecting fails at once with ConnectionClosed.

    Spec: 2025-11-25 basic/transports.mdx §Streamable HTTP (client side).
    """
    with socket.socket() as sock:  # a port that was free a moment ago
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    start = time.monotonic()
    with pytest.raises(ConnectionClosed, match="cannot connect"):
        async with Client(url, protocol_version=ERA):
            pass
    assert time.monotonic() - start < 10.0  # at once, not after retries (loaded-machine margin)


async def test_cross_origin_legacy_endpoint_is_refused(fault: Running) -> None:
    """2024-11-05 §HTTP with SSE and security: an ``endpoint`` on another origin would
    receive our messages and headers; it is refused, and the fallback (2025-11-25
    §Backwards Compatibility) reports the initialize POST's own error instead."""
    with pytest.raises(LegacyUnavailable, match="same origin"):
        async with LegacySSETransport(fault.base + "/legacy-evil"):
            pass
    with pytest.raises(McpError, match="HTTP 405"):
        async with Client(fault.base + "/legacy-evil", protocol_version=ERA, timeout=10):
            pass


async def test_timed_out_call_is_cancelled_and_its_stream_closed(fault: Running) -> None:
    """§Sending Messages, point 6: disconnecting is not cancelling, so the client sends
    ``notifications/cancelled`` and then stops reading that request's stream."""
    async with (
        connect_http(fault.base + "/mcp") as transport,
        Client(transport, protocol_version=ERA) as client,
    ):
        with pytest.raises(RequestTimeout):
            await client.call("hang", options=RequestOptions(timeout=0.3))
        with anyio.fail_after(2):
            while transport._inflight:  # noqa: ASYNC110 - polls the POST for "hang" closing
                await anyio.sleep(0.01)
        session = transport.session_id
        assert text_of(await client.call("json")) == "json"
    rpcs = [e.get("rpc") for e in session_entries(fault.log(), session)]
    assert "notifications/cancelled" in rpcs


async def test_client_opens_a_transport_factory(fault: Running) -> None:
    """``Client(connect_http(url, headers=...))``: options without a separate ``async with``.

    Spec: 2025-11-25 basic/transports.mdx §Streamable HTTP (client side).
    """
    factory = connect_http(fault.base + "/mcp", headers={"x-factory": "yes"})
    async with Client(factory, protocol_version=ERA) as client:
        seen = json.loads(text_of(await client.call("headers")))
        transport = client.connection.transport  # type: ignore[union-attr]
        assert isinstance(transport, StreamableHTTPTransport)
    assert seen["x-factory"] == "yes"
    with pytest.raises(TransportClosed):
        await transport.send(b'{"jsonrpc":"2.0","method":"notifications/x"}')


@pytest.mark.parametrize("path", ["/mcp", "/legacy"], ids=["streamable", "legacy-sse"])
async def test_frozen_server_times_out_the_call_without_a_hang(path: str) -> None:
    """A server that accepts connections but stopped answering (SIGSTOP): a call with a
    0.5 s deadline fails with RequestTimeout at that deadline; the cancellation that follows
    is best effort, in the background, so the caller never waits on the frozen server, and
    closing the client is bounded too. The same over the 2024-11-05 HTTP+SSE transport.

    Spec: 2025-11-25 basic/utilities/cancellation.mdx; basic/transports.mdx §Sending
    Messages to the Server 6 (cancellation is a notification, its delivery not awaited).
    """
    import os
    import signal

    with server("fault") as srv:
        try:
            async with Client(srv.base + path, protocol_version=ERA, timeout=30) as client:
                os.kill(srv.process.pid, signal.SIGSTOP)
                started = time.monotonic()
                with anyio.fail_after(10), pytest.raises(RequestTimeout):
                    await client.call("json", options=RequestOptions(timeout=0.5))
                assert time.monotonic() - started < 5  # the frozen server never answers
                closing = time.monotonic()
            assert time.monotonic() - closing < 6  # the DELETE waits 2 s at most; load margin
        finally:
            os.kill(srv.process.pid, signal.SIGCONT)
