"""Each hand-inlined copy of a helper that stays on a hot path does what its original does
(issue 29): the copy and the original, run on the same inputs, leave the same results and the
same state. A copy stays only where ``bench/inlines/run.py`` (``make bench-inlines``) measures
a gain of at least 0.3% of a request's instructions; the others call their original."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest

from mcpbind import types as t
from mcpbind.client.outgoing_meta import OutgoingMeta
from mcpbind.client.pipeline import Pipeline
from mcpbind.connection import Connection, Waiter
from mcpbind.http.server._asgi import send_response
from mcpbind.http.server.per_request import _JSON, _send_json
from mcpbind.protocol import Cancelled, RequestReceived, ResponseReceived, Session
from mcpbind.protocol.meta import with_meta
from mcpbind.transports import TransportClosed
from mcpbind.versions import LATEST_HANDSHAKE, LATEST_STATELESS
from mcpbind_types.unified import methods as m

pytestmark = pytest.mark.anyio


async def _refuse(event: Any) -> Any:
    raise AssertionError(f"unexpected request {event.method}")  # pragma: no cover


class _Idle:
    """A transport nothing arrives on until it is closed."""

    def __init__(self) -> None:
        self.closed = asyncio.Event()

    async def send(self, message: bytes) -> None:
        pass  # pragma: no cover

    async def receive(self) -> bytes:
        await self.closed.wait()
        raise TransportClosed("closed")

    async def aclose(self) -> None:
        self.closed.set()


def _connection() -> Connection:
    return Connection(Session("client", LATEST_HANDSHAKE), _Idle(), on_request=_refuse)


#: A waiter's situations when its answer arrives: waiting, already done (timed out),
#: its caller gone (the future cancelled).
_SITUATIONS = ("waiting", "done", "caller gone")


def _waiter(situation: str) -> Waiter:
    waiter = Waiter("tools/call", None, 0.0, None, asyncio.get_running_loop().create_future())
    if situation == "done":
        waiter.done, waiter.timed_out = True, True
        waiter.future.set_result(None)
    elif situation == "caller gone":
        waiter.future.cancel()
    return waiter


def _state(waiter: Waiter | None) -> tuple[Any, ...]:
    if waiter is None:
        return ()
    future = waiter.future
    return (
        waiter.result,
        waiter.error,
        waiter.done,
        waiter.timed_out,
        future.done(),
        future.cancelled(),
    )


@pytest.mark.parametrize("situation", (*_SITUATIONS, "unknown id"))
async def test_take_settles_a_response_as_resolve_does(situation: str) -> None:
    """``Connection._take`` (the pump's handler) holds a copy of ``Connection._resolve`` for
    a result: the same waiter state, and nothing else touched."""
    result = {"content": [{"type": "text", "text": "hi"}]}
    by_copy, by_original = _connection(), _connection()
    for conn in (by_copy, by_original):
        if situation != "unknown id":
            conn._waiters[1] = _waiter(situation)
    event = ResponseReceived(1, "tools/call", result)
    by_copy.core.receive = lambda data: [event]  # type: ignore[method-assign]
    assert by_copy._take(b"(the response)")
    by_original._resolve(1, result=result)
    assert _state(by_copy._waiters.get(1)) == _state(by_original._waiters.get(1))
    assert list(by_copy._waiters) == list(by_original._waiters)


class _OneMessage(_Idle):
    """A transport that delivers one message, then nothing until it is closed."""

    def __init__(self) -> None:
        super().__init__()
        self.delivered = False
        self.asked_again = asyncio.Event()  # every event of the message was handled

    async def receive(self) -> bytes:
        if not self.delivered:
            self.delivered = True
            return b"(one message)"
        self.asked_again.set()
        return await super().receive()


async def test_read_loop_handles_events_as_dispatch_does() -> None:
    """The read loop holds a copy of ``Connection._dispatch`` for responses and requests: the
    same waiters settled and the same requests started, in the same order."""
    events = [
        ResponseReceived(1, "tools/call", {"content": []}),
        RequestReceived(7, "ping", None, None),  # type: ignore[arg-type]
        ResponseReceived(2, "tools/call", {"content": []}),  # no waiter: ignored
        Cancelled(7, None),
        ResponseReceived(3, "tools/call", {"isError": True}),  # its waiter is done already
    ]
    seen: dict[str, list[object]] = {"copy": [], "original": []}
    conns = {
        "copy": Connection(Session("client", LATEST_HANDSHAKE), _OneMessage(), on_request=_refuse),
        "original": _connection(),
    }
    for name, conn in conns.items():
        conn._waiters[1], conn._waiters[3] = _waiter("waiting"), _waiter("done")
        conn.runner.start = lambda event, log=seen[name]: log.append(("start", event))  # type: ignore[method-assign]
        conn.runner.cancel = lambda rid, log=seen[name]: log.append(("cancel", rid))  # type: ignore[method-assign]
    by_copy = conns["copy"]
    by_copy.core.receive = lambda data: list(events)  # type: ignore[method-assign]
    reader = asyncio.get_running_loop().create_task(by_copy._read_loop())
    await by_copy.transport.asked_again.wait()  # type: ignore[attr-defined]
    states = {
        name: [_state(conn._waiters.get(i)) for i in (1, 2, 3)] for name, conn in conns.items()
    }
    for event in events:
        await conns["original"]._dispatch(event)
    states["original"] = [_state(conns["original"]._waiters.get(i)) for i in (1, 2, 3)]
    reader.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await reader
    assert seen["copy"] == seen["original"] == [("start", events[1]), ("cancel", 7)]
    assert states["copy"] == states["original"]
    assert states["copy"][0][2] is True  # the waiting one was settled


@pytest.mark.parametrize("status", [200, 400, 503])
async def test_send_json_sends_what_send_response_sends(status: int) -> None:
    """Streamable HTTP (2026-07-28, basic/transports): ``_send_json`` is a copy of
    ``send_response`` for a JSON body: the same ASGI messages."""
    body = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    by_copy: list[dict[str, Any]] = []
    by_original: list[dict[str, Any]] = []

    async def into(log: list[dict[str, Any]], message: dict[str, Any]) -> None:
        log.append(message)

    await _send_json(functools.partial(into, by_copy), status, body)
    await send_response(functools.partial(into, by_original), status, body, content_type=_JSON)
    assert by_copy == by_original


class _Held(_Idle):
    """A transport whose sends wait until released: a request stays in flight."""

    def __init__(self) -> None:
        super().__init__()
        self.sending = asyncio.Event()
        self.sent: list[bytes] = []

    async def send(self, message: bytes) -> None:
        self.sent.append(message)
        self.sending.set()
        await self.closed.wait()


@pytest.mark.parametrize("due", [math.inf, 0.0], ids=["no timer yet", "an earlier timer"])
async def test_request_arms_its_timeout_as_arm_does(due: float) -> None:
    """``Connection.request`` holds a copy of ``Connection._arm`` (no options) and of
    ``Connection.send`` (its data is never ``None``): the same deadline and timer, and the
    request's bytes handed to the transport as ``send`` hands them."""
    transport = _Held()
    conn = Connection(Session("client", LATEST_HANDSHAKE), transport, on_request=_refuse)
    async with conn:
        twin = _connection()
        twin._loop = asyncio.get_running_loop()
        if due == 0.0:  # a timer already set for an earlier deadline
            conn._set_timer(conn._clock() + 1)
            twin._set_timer(conn._due)
        task = asyncio.get_running_loop().create_task(conn.request("ping", None))
        await transport.sending.wait()
        (waiter,) = conn._waiters.values()
        by_original = Waiter(
            "ping", None, waiter.started, waiter.timeout, twin._loop.create_future()
        )
        twin._arm(by_original, waiter.started)
        assert waiter.deadline == by_original.deadline
        assert conn._due == twin._due
        twin_transport = _Held()
        twin.transport = twin_transport
        sending = asyncio.get_running_loop().create_task(twin.send(transport.sent[0]))
        await twin_transport.sending.wait()
        assert twin_transport.sent == transport.sent
        task.cancel()
        sending.cancel()
        twin_transport.closed.set()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        with contextlib.suppress(asyncio.CancelledError):
            await sending
        twin._fail_all("done")


class _Recorder:
    """A connection that records the params it is asked to send and answers complete."""

    def __init__(self) -> None:
        self.core = SimpleNamespace(version=LATEST_STATELESS)
        self.sent: list[Any] = []

    async def request(self, name: str, params: Any, options: Any, *, info: Any = None) -> Any:
        self.sent.append(params)
        return t.CallToolResult(content=[], result_type="complete")


async def test_pipeline_sends_the_usual_request_as_with_meta_makes_it() -> None:
    """basic/index.mdx (2026-07-28: every request carries the client's ``_meta``): the
    pipeline's shortest way holds a copy of ``with_meta``: the same params on the wire."""
    meta = OutgoingMeta()
    meta.introduce(t.ClientCapabilities(), t.Implementation(name="inlines", version="1"))
    meta.use_version(LATEST_STATELESS)
    conn = _Recorder()
    pipeline = Pipeline(conn, meta, SimpleNamespace())  # type: ignore[arg-type]
    params = t.CallToolRequestParams(name="echo", arguments={"text": "hi"})
    await pipeline.request(m.C2S_CALL_TOOL, params, None)  # checks the method: with_meta
    await pipeline.request(m.C2S_CALL_TOOL, params, None)  # the shortest way: the copy
    expected = with_meta(m.C2S_CALL_TOOL, params, *meta.wire())
    encoded = [msgspec.json.encode(sent) for sent in conn.sent]
    assert encoded == [msgspec.json.encode(expected)] * 2
    assert params.meta is msgspec.UNSET  # the caller's params are left as they were
