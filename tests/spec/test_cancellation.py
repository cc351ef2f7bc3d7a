"""basic/utilities/cancellation.mdx (2024-11-05, 2025-03-26, 2025-11-25): a caller's cancel
scope sends notifications/cancelled; the receiver stops the handler and sends no response;
invalid cancellations and late responses are ignored; initialize is never cancelled."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpbind import LATEST_HANDSHAKE, Client, RequestTimeout
from mcpbind import types as t
from mcpbind.transports import StdioClientTransport, TransportClosed, memory_pair
from tests.host.helpers import SERVERS

from .conftest import Connect
from .helpers import (
    exchange,
    journal,
    memory_session,
    raw_connection,
    raw_handshake,
    text_of,
    wait_journal,
)
from .servers import raw_replies

pytestmark = pytest.mark.anyio


def _is(event: str, label: str) -> Any:
    return lambda entry: entry["event"] == event and entry["label"] == label


async def test_cancel_scope_interrupts_the_handler_and_no_response_follows(
    connect: Connect,
) -> None:
    """cancellation.mdx §Cancellation Flow / §Behavior Requirements 4: leaving a cancel scope
    around a call sends notifications/cancelled; the receiver stops processing and does not
    send a response (the client drops none afterwards)."""
    async with connect("full") as client:

        async def call() -> None:
            await client.call("sleep", {"seconds": 30, "label": "a"})
            raise AssertionError("the call must not complete")

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await wait_journal(client, _is("started", "a"))  # the handler is running
            tg.cancel_scope.cancel()
        await wait_journal(client, _is("cancelled", "a"))
        await client.ping()  # anything sent for the cancelled call would arrive before this
        assert client.connection is not None
        assert client.connection.core.dropped_responses == 0
        assert not [e for e in await journal(client) if e == {"event": "finished", "label": "a"}]


async def test_cancellation_right_after_the_request(transport: str) -> None:
    """cancellation.mdx §Behavior Requirements 4 / §Timing Considerations: a cancellation that
    arrives right behind its request (before the handler got to run) still stops the handler."""
    call = {"name": "sleep", "arguments": {"seconds": 30, "label": "r"}}
    cancel = {"requestId": 7, "reason": "changed my mind"}
    async with raw_connection(transport) as peer:
        await raw_handshake(peer)
        await peer.send(json.dumps(_rpc(method="tools/call", id=7, params=call)).encode())
        await peer.send(json.dumps(_rpc(method="notifications/cancelled", params=cancel)).encode())
        # The journal is read after the cancellation was delivered (messages are handled in
        # order); a handler that had started records its cancellation when it next runs:
        # polled (bounded) while it shows "started" only.
        events: list[str] = ["started"]
        with anyio.fail_after(10):
            for rid in range(8, 10_000):
                journal_call = _rpc(method="tools/call", id=rid, params={"name": "journal_entries"})
                entries = await exchange(peer, journal_call)
                # The cancelled call got no response: the next message is this one's.
                assert entries["id"] == rid
                journaled = entries["result"]["structuredContent"]["result"]
                events = [e["event"] for e in journaled if e["label"] == "r"]
                if events != ["started"]:
                    break
                await anyio.sleep(0.02)
    # Stopped before its first step, or at its first await: either way it never finished.
    assert events in ([], ["started", "cancelled"])


def _rpc(**fields: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", **fields}


@pytest.mark.memory_only
async def test_cancellation_on_the_wire() -> None:
    """cancellation.mdx §Cancellation Flow: ``notifications/cancelled`` carries the requestId
    of the in-flight request (and a reason); §Behavior Requirements 4: no response is sent for
    it."""
    async with memory_session("full") as (client, _session, wire):
        with anyio.move_on_after(0.2):
            await client.call("sleep", {"seconds": 30, "label": "w"})
        await wait_journal(client, _is("cancelled", "w"))
        await client.ping()
    call = next(m for m in wire.received if m.get("method") == "tools/call")
    cancel = next(m for m in wire.received if m.get("method") == "notifications/cancelled")
    assert cancel["params"]["requestId"] == call["id"]
    assert isinstance(cancel["params"]["reason"], str)
    assert wire.responses_to(call["id"]) == []


@pytest.mark.memory_only
async def test_cancelling_one_request_leaves_the_others_running(connect: Connect) -> None:
    """cancellation.mdx §Behavior Requirements 1 and 4: the notification references one request;
    only that handler stops."""
    async with connect("full") as client:
        results: list[str] = []

        async def run_b() -> None:
            results.append(text_of(await client.call("sleep", {"seconds": 0.5, "label": "b"})))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run_b)
            with anyio.move_on_after(0.2):
                await client.call("sleep", {"seconds": 30, "label": "a"})
        assert results == ["b"]
        await wait_journal(client, _is("cancelled", "a"))
        assert {"event": "finished", "label": "b"} in await journal(client)


@pytest.mark.memory_only
async def test_context_reports_cancelled_inside_the_handler(connect: Connect) -> None:
    """cancellation.mdx §Behavior Requirements 4 (receivers stop processing): the handler can
    tell it was cancelled -- ``Context.cancelled`` is documented as "True once the client
    cancelled this request"."""
    async with connect("full") as client:
        with anyio.move_on_after(0.2):
            await client.call("sleep", {"seconds": 30, "label": "c"})
        entry = await wait_journal(client, _is("cancelled", "c"))
    assert entry["flag"] is True


@pytest.mark.memory_only
async def test_invalid_cancellations_are_ignored(connect: Connect) -> None:
    """cancellation.mdx §Error Handling / §Behavior Requirements 5: cancellations of unknown or
    already completed requests SHOULD be ignored; the session carries on."""
    async with connect("full") as client:
        assert text_of(await client.call("echo", {"text": "done"})) == "done"  # id 2 (1: init)
        await client.notify_cancelled(t.CancelledNotificationParams(request_id=2, reason="late"))
        await client.notify_cancelled(t.CancelledNotificationParams(request_id=99999))
        await client.notify_cancelled(t.CancelledNotificationParams(request_id="nope"))
        assert text_of(await client.call("echo", {"text": "still here"})) == "still here"


async def _fake_server(handle: Any, server_end: Any, seen: list[dict[str, Any]]) -> None:
    """A hand-written server: ``handle(message)`` returns the replies to send."""
    try:
        while True:
            message = json.loads(await server_end.receive())
            seen.append(message)
            for reply in await handle(message):
                await server_end.send(json.dumps(reply).encode())
    except TransportClosed:
        pass
    finally:
        await server_end.aclose()


@pytest.mark.memory_only
async def test_late_response_after_cancellation_is_ignored() -> None:
    """cancellation.mdx §Behavior Requirements 6 / §Timing Considerations: "The sender of the
    cancellation notification SHOULD ignore any response to the request that arrives
    afterward" -- the race is handled gracefully."""
    client_end, server_end = memory_pair()
    seen: list[dict[str, Any]] = []
    calls: list[Any] = []

    async def handle(message: dict[str, Any]) -> list[dict[str, Any]]:
        if message.get("method") == "tools/call":
            calls.append(message["id"])
            return []
        if message.get("method") == "notifications/cancelled":  # answer anyway: too late
            result = {"content": [{"type": "text", "text": "late"}]}
            return [{"jsonrpc": "2.0", "id": calls[0], "result": result}]
        return list(raw_replies(message, "2025-11-25"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(_fake_server, handle, server_end, seen)
        async with Client(client_end, enforce_capabilities=False) as client:
            with anyio.move_on_after(0.2):
                await client.call_tool(t.CallToolRequestParams(name="slow"))
            await client.ping()
            assert client.connection is not None
            assert client.connection.core.dropped_responses == 1


@pytest.mark.memory_only
async def test_initialize_is_never_cancelled() -> None:
    """cancellation.mdx §Behavior Requirements 2: "The initialize request MUST NOT be cancelled
    by clients" -- a timed-out initialize fails locally without notifications/cancelled."""
    client_end, server_end = memory_pair()
    seen: list[dict[str, Any]] = []

    async def silent(message: dict[str, Any]) -> list[dict[str, Any]]:
        return []

    async with anyio.create_task_group() as tg:
        tg.start_soon(_fake_server, silent, server_end, seen)
        with pytest.raises(RequestTimeout):
            async with Client(client_end, timeout=0.2, protocol_version=LATEST_HANDSHAKE):
                pytest.fail("initialize was never answered")
    assert [m.get("method") for m in seen] == ["initialize"]


async def _appeared(path: Path, timeout: float = 10.0) -> bool:
    """Bounded polling for a file the server process writes."""
    with anyio.move_on_after(timeout):
        while not await anyio.Path(path).exists():  # noqa: ASYNC110 - another process writes it
            await anyio.sleep(0.02)
        return True
    return False


async def test_a_request_cancelled_while_half_written_is_cancelled_on_the_server(
    tmp_path: Path,
) -> None:
    """§Behavior Requirements 4 and §Timing Considerations, over stdio: a caller cancelled
    while its request is only partly written (the server is not reading: the pipe is full)
    does not tear the message, which goes out whole once the server reads again; so the
    server receives the request and must also get its ``notifications/cancelled``, behind
    it. It used to get none (the request counted as unsent) and ran the call until it ended
    (here: never). The cancelled caller does not wait for the stopped server either."""
    marker = tmp_path / "call"
    path = os.environ.get("PYTHONPATH")
    env = {"PYTHONPATH": path} if path else None
    spawned = StdioClientTransport.spawn(sys.executable, [SERVERS, "waiter"], env=env)
    async with spawned as transport, Client(transport, protocol_version=LATEST_HANDSHAKE) as client:
        assert client.connection is not None
        # Bigger than a pipe's buffer (64 KiB on Linux): only part of it goes out at once.
        pad = "x" * (256 * 1024)
        params = {"name": "wait", "arguments": {"marker": str(marker)}, "padding": pad}
        os.kill(transport.pid, signal.SIGSTOP)
        try:
            with anyio.fail_after(10):  # the cancelled caller is not held by the server
                async with anyio.create_task_group() as tg:
                    tg.start_soon(client.connection.request, "tools/call", params)
                    await anyio.wait_all_tasks_blocked()  # the request is being written
                    tg.cancel_scope.cancel()
        finally:
            os.kill(transport.pid, signal.SIGCONT)
        # The server reads the rest of the request and the cancel behind it together: the
        # cancel lands on the handler's first await (its marker may never be written).
        assert await _appeared(Path(f"{marker}.cancelled"))
