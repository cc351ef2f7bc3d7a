"""basic/lifecycle.mdx §Timeouts (2025-03-26, 2025-11-25; 2024-11-05 has the same rules in
basic/utilities/cancellation.mdx): per-request timeouts that cancel the request on the
peer, an optional reset on progress, and a maximum total timeout regardless of progress."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpbind import ClientHandlers, RequestOptions, RequestTimeout
from mcpbind import types as t
from mcpbind.protocol import REQUEST_TIMEOUT

from .conftest import Connect
from .helpers import memory_session, text_of, wait_journal

pytestmark = pytest.mark.anyio


def _started(label: str) -> Any:
    """Journal predicate: the handler for ``label`` is running."""
    return lambda entry: entry["event"] == "started" and entry["label"] == label


def _cancelled(label: str) -> Any:
    """Journal predicate: the handler for ``label`` was interrupted (server-side view of the
    notifications/cancelled it received)."""
    return lambda entry: entry["event"] == "cancelled" and entry["label"] == label


async def _no_progress(progress: float, total: float | None, message: str | None) -> None:
    pass


async def test_per_call_timeout_cancels_on_the_peer(connect: Connect) -> None:
    """lifecycle.mdx §Timeouts: with no response within the timeout, the sender "SHOULD issue a
    cancellation notification for that request and stop waiting"; SDKs "SHOULD allow these
    timeouts to be configured on a per-request basis". The server sees the cancellation."""
    async with connect("full") as client:
        with pytest.raises(RequestTimeout) as caught:
            args = {"seconds": 30, "label": "t"}
            await client.call("sleep", args, options=RequestOptions(timeout=0.5))
        assert caught.value.code == REQUEST_TIMEOUT
        assert "tools/call" in caught.value.message
        await wait_journal(client, _cancelled("t"))  # the handler was interrupted server-side
        assert text_of(await client.call("echo", {"text": "alive"})) == "alive"


@pytest.mark.memory_only
async def test_timeout_sends_cancelled_with_reason() -> None:
    """lifecycle.mdx §Timeouts + cancellation.mdx §Cancellation Flow: the notification names the
    timed-out request, and the client default timeout applies when no per-call one is given."""
    async with memory_session("full", timeout=0.2) as (client, _session, wire):
        with pytest.raises(RequestTimeout):
            await client.call("sleep", {"seconds": 30, "label": "d"})
        await wait_journal(client, _cancelled("d"))
    call = next(m for m in wire.received if m.get("method") == "tools/call")
    cancel = next(m for m in wire.received if m.get("method") == "notifications/cancelled")
    assert cancel["params"] == {"requestId": call["id"], "reason": "timeout"}


async def test_progress_resets_the_timeout(connect: Connect) -> None:
    """lifecycle.mdx §Timeouts: "Implementations MAY choose to reset the timeout clock when
    receiving a progress notification corresponding to the request" -- a call lasting twice
    its timeout succeeds while progress keeps arriving."""
    options = RequestOptions(timeout=0.6, on_progress=_no_progress, reset_timeout_on_progress=True)
    async with connect("full") as client:
        start = anyio.current_time()
        args = {"n": 16, "interval": 0.05, "label": "r"}
        result = await client.call("steps", args, options=options)
        assert anyio.current_time() - start > 0.6
    assert text_of(result) == "r"


@pytest.mark.memory_only
async def test_without_reset_progress_does_not_extend_the_timeout(connect: Connect) -> None:
    """lifecycle.mdx §Timeouts: resetting is optional (``reset_timeout_on_progress`` off by
    default): the same call times out."""
    options = RequestOptions(timeout=0.4, on_progress=_no_progress)
    async with connect("full") as client:
        with pytest.raises(RequestTimeout):
            await client.call("steps", {"n": 8, "interval": 0.1, "label": "n"}, options=options)
        await wait_journal(client, _cancelled("n"))


async def test_max_total_timeout_wins_over_progress(connect: Connect) -> None:
    """lifecycle.mdx §Timeouts: "implementations SHOULD always enforce a maximum timeout,
    regardless of progress notifications"; the peer receives notifications/cancelled."""
    updates: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append(progress)

    options = RequestOptions(
        timeout=0.6, on_progress=on_progress, reset_timeout_on_progress=True, max_total_timeout=1.0
    )
    async with connect("full") as client:
        start = anyio.current_time()
        with pytest.raises(RequestTimeout):
            args = {"n": 100, "interval": 0.05, "label": "m"}
            await client.call("steps", args, options=options)
        elapsed = anyio.current_time() - start
        await wait_journal(client, _cancelled("m"))
    assert 0.95 <= elapsed < 4.0
    assert len(updates) >= 3  # progress did arrive (and reset the clock) before the cap


async def test_server_request_timeout_cancels_the_client_handler(connect: Connect) -> None:
    """lifecycle.mdx §Timeouts, server -> client: a server request (sampling) that times out is
    cancelled on the client, whose handler is interrupted; the tool call fails."""
    interrupted = anyio.Event()

    async def hang(params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        try:
            await anyio.sleep_forever()
        finally:
            interrupted.set()
        raise AssertionError("unreachable")

    async with connect("full", handlers=ClientHandlers(sampling=hang)) as client:
        result = await client.call("sample", {"prompt": "hi", "timeout": 0.5})
        with anyio.fail_after(5):
            await interrupted.wait()
    # tools.mdx §Error Handling: the failure of the tool's own request is a tool error result
    assert result.is_error is True
    message = " ".join(getattr(c, "text", "") for c in result.content)
    assert "sampling/createMessage" in message
    assert "timed out" in message


async def test_a_shorter_timeout_behind_longer_ones_still_fires(connect: Connect) -> None:
    """lifecycle.mdx §Timeouts, per-request timeouts: a call with a short timeout times out
    while calls with long ones are in flight (their deadlines come later, so the connection's
    one timer must move earlier for it), and those calls still complete."""
    long = RequestOptions(timeout=30)
    results: list[str] = []

    async def slow(label: str) -> None:
        # 5 s: 25 times the short timeout, a margin that holds on a loaded machine.
        args = {"seconds": 5, "label": label}
        results.append(text_of(await client.call("sleep", args, options=long)))

    async with connect("full") as client:
        with anyio.fail_after(40):
            async with anyio.create_task_group() as tg:
                tg.start_soon(slow, "a")
                tg.start_soon(slow, "b")
                for label in ("a", "b"):  # both long calls are in flight
                    await wait_journal(client, _started(label))
                with pytest.raises(RequestTimeout):
                    args = {"seconds": 30, "label": "s"}
                    await client.call("sleep", args, options=RequestOptions(timeout=0.2))
                assert results == []  # timed out before the long calls ended
            await wait_journal(client, _cancelled("s"))
    assert len(results) == 2
