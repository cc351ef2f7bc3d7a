"""One runner for every entry (issue 29): a request reaches its handler through one of five
entries, and all five go through :class:`mcpbind.runner.Runner`, so they show the same in-flight
refusal, cancellation (basic/utilities/cancellation.mdx), error mapping (schema.mdx: -32603
for a handler's failure, no detail unless debugging) and ``current_request_id``:

1. a connection's read loop (here the in-memory transport; stdio and busy HTTP sessions too);
2. an HTTP session at rest, answering in the POST's own task (JSON response mode);
3. a 2026-07-28 request on a connection (per-request ``_meta``, no handshake);
4. a 2026-07-28 POST, without a session (basic/transports/streamable-http.mdx);
5. a POST of the 2025 sessionless mode (``StreamableHTTPApp(sessionless=True)``).

One custom method, ``acme/probe``, registered once: ``{"mode": "ok"}`` answers, ``"fail"``
raises, ``"wait"`` runs until it is cancelled.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import msgspec
import pytest
from support.polling import until_async

from mcpbind import LATEST_HANDSHAKE, LATEST_STATELESS, Server
from mcpbind.http import StreamableHTTPApp
from mcpbind.protocol import INTERNAL_ERROR
from mcpbind.runner import current_request_id
from mcpbind.server.limits import server_inflight
from mcpbind.server.session import ServerSession
from mcpbind.transports import memory_pair
from tests.http.server._support import LiveServer, headers, init_body

pytestmark = pytest.mark.anyio

META = {
    "io.modelcontextprotocol/protocolVersion": LATEST_STATELESS,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
}
ENTRIES = ["read loop", "session at rest", "2026 on a connection", "2026 POST", "sessionless POST"]


class Probe:
    """What the handler saw; thread-safe (the HTTP entries run it in uvicorn's thread)."""

    def __init__(self) -> None:
        self.ids: list[object] = []
        self.cancelled: list[object] = []
        self.waiting = threading.Event()


def make_server(probe: Probe) -> Server:
    server = Server("one-runner", "1.0")

    @server.method("acme/probe")
    async def run(params: dict[str, Any], ctx: Any) -> dict[str, Any]:
        rid = current_request_id.get()
        probe.ids.append(rid)
        mode = params.get("mode")
        if mode == "fail":
            raise RuntimeError("a secret detail")
        if mode == "wait":
            probe.waiting.set()
            try:
                await asyncio.Event().wait()  # until cancelled
            except asyncio.CancelledError:
                probe.cancelled.append(rid)
                raise
        return {"ok": True, "id": rid}

    return server


class Entry:
    """One way in: ``call`` answers a request (``None``: nothing came back), ``start`` sends
    one that waits and returns a cancel function (the entry's own way to cancel)."""

    call: Callable[[int, str], Awaitable[dict[str, Any] | None]]
    start: Callable[[int], Awaitable[Callable[[], Awaitable[None]]]]


def params(mode: str, meta: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"mode": mode}
    if meta:
        out["_meta"] = META
    return out


def request(rid: int, mode: str, meta: bool) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "acme/probe", "params": params(mode, meta)}


@asynccontextmanager
async def on_a_connection(server: Server, stateless: bool) -> AsyncIterator[Entry]:
    """Entries 1 and 3: an in-memory connection, handshake era or 2026-07-28."""
    client_end, server_end = memory_pair()
    session = ServerSession(server, server_end)
    answers: dict[object, dict[str, Any]] = {}
    arrived = anyio.Event()

    async def read() -> None:
        nonlocal arrived
        while True:
            message = msgspec.json.decode(await client_end.receive())
            answers[message.get("id")] = message
            arrived.set()
            arrived = anyio.Event()

    async def send(message: dict[str, Any]) -> None:
        await client_end.send(msgspec.json.encode(message))

    async def answer_to(rid: int) -> dict[str, Any]:
        with anyio.fail_after(10):
            while rid not in answers:
                await arrived.wait()
        return answers.pop(rid)

    async def call(rid: int, mode: str) -> dict[str, Any] | None:
        await send(request(rid, mode, stateless))
        return await answer_to(rid)

    async def start(rid: int) -> Callable[[], Awaitable[None]]:
        await send(request(rid, "wait", stateless))

        async def cancel() -> None:
            note = {"requestId": rid, "reason": "no longer needed"}
            await send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": note})

        return cancel

    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        tg.start_soon(read)
        if not stateless:
            init = init_body(LATEST_HANDSHAKE, 0)
            await send(init)
            assert "result" in await answer_to(0)
            await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        entry = Entry()
        entry.call, entry.start = call, start
        yield entry
        assert answers == {}, "an answer nobody asked for"
        await client_end.aclose()
        tg.cancel_scope.cancel()


@asynccontextmanager
async def over_http(server: Server, kind: str) -> AsyncIterator[Entry]:
    """Entries 2, 4 and 5: a real uvicorn on 127.0.0.1."""
    app = StreamableHTTPApp(
        server, path="/mcp", json_response=kind == "session", sessionless=kind == "sessionless"
    )
    live = LiveServer(app).start()
    try:
        async with httpx2.AsyncClient(timeout=10) as http, anyio.create_task_group() as tg:
            version = LATEST_STATELESS if kind == "2026" else LATEST_HANDSHAKE
            sid: str | None = None
            if kind == "session":
                opened = await http.post(live.url, json=init_body(version, 0), headers=headers())
                sid = opened.headers["mcp-session-id"]
                note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                await http.post(live.url, json=note, headers=headers(sid))

            def hdrs() -> dict[str, str]:
                extra = {"mcp-method": "acme/probe"} if kind == "2026" else {}
                return headers(sid, version, **extra)

            async def call(rid: int, mode: str) -> dict[str, Any] | None:
                body = json.dumps(request(rid, mode, kind == "2026"))
                response = await http.post(live.url, content=body, headers=hdrs())
                # 2026-07-28: "Server busy" is HTTP 503; a cancelled request of a session in
                # JSON mode is 202 (no response, the session goes on); everything else 200.
                assert response.status_code in (200, 202, 503), response.text
                if response.headers.get("content-type", "").startswith("text/event-stream"):
                    data = [ln[5:] for ln in response.text.splitlines() if ln.startswith("data:")]
                    return json.loads(data[-1]) if data else None
                return response.json() if response.content else None

            async def start(rid: int) -> Callable[[], Awaitable[None]]:
                scope = anyio.CancelScope()

                async def post() -> None:
                    with scope:
                        await call(rid, "wait")

                tg.start_soon(post)

                async def cancel() -> None:
                    if kind == "session":  # a session's client cancels by notification
                        note = {"requestId": rid, "reason": "no longer needed"}
                        message = {
                            "jsonrpc": "2.0",
                            "method": "notifications/cancelled",
                            "params": note,
                        }
                        await http.post(live.url, json=message, headers=hdrs())
                    else:  # without a session, by closing the response (Cancellation)
                        scope.cancel()

                return cancel

            entry = Entry()
            entry.call, entry.start = call, start
            yield entry
            tg.cancel_scope.cancel()
    finally:
        live.stop()


@asynccontextmanager
async def entry_for(name: str, server: Server) -> AsyncIterator[Entry]:
    if name == "read loop":
        context = on_a_connection(server, stateless=False)
    elif name == "2026 on a connection":
        context = on_a_connection(server, stateless=True)
    else:
        kind = {
            "session at rest": "session",
            "2026 POST": "2026",
            "sessionless POST": "sessionless",
        }
        context = over_http(server, kind[name])
    async with context as entry:
        yield entry


async def wait_for(condition: Callable[[], bool]) -> None:
    await until_async(condition)


@pytest.mark.parametrize("name", ENTRIES)
async def test_the_same_answer_error_and_request_id(name: str) -> None:
    """An answer carries the handler's result; a handler's exception is -32603 "Internal
    error" without its text (basic/index.mdx, error codes; the detail only in debug mode);
    inside the handler, ``current_request_id`` names its request."""
    probe = Probe()
    async with entry_for(name, make_server(probe)) as entry:
        ok = await entry.call(11, "ok")
        assert ok is not None and ok["id"] == 11 and ok["result"]["ok"] is True
        failed = await entry.call(12, "fail")
        assert failed is not None and failed["id"] == 12
        assert failed["error"] == {"code": INTERNAL_ERROR, "message": "Internal error"}
    assert probe.ids == [11, 12]


@pytest.mark.parametrize("name", ENTRIES)
async def test_the_same_in_flight_refusal(name: str) -> None:
    """Beyond the server's in-flight bound a request is answered "Server busy" at once and
    nothing runs for it, whichever entry it came in by; the slot is free again once the
    running request ends."""
    probe = Probe()
    server = make_server(probe)
    server_inflight(server).limit = 1
    async with entry_for(name, server) as entry:
        cancel = await entry.start(21)
        await wait_for(probe.waiting.is_set)
        busy = await entry.call(22, "ok")
        assert busy is not None and busy["id"] == 22
        assert busy["error"] == {
            "code": INTERNAL_ERROR,
            "message": "Server busy: 1 requests in flight on this server; retry later",
        }
        assert probe.ids == [21], "nothing ran for the refused request"
        await cancel()
        await wait_for(lambda: server_inflight(server).count == 0)
        again = await entry.call(23, "ok")
        assert again is not None and again["result"]["ok"] is True


@pytest.mark.parametrize("name", ENTRIES)
async def test_the_same_cancellation(name: str) -> None:
    """basic/utilities/cancellation.mdx: the cancelled request's handler is interrupted, no
    answer is sent for it, and its slot is free; the entry goes on answering."""
    probe = Probe()
    server = make_server(probe)
    async with entry_for(name, server) as entry:
        cancel = await entry.start(31)
        await wait_for(probe.waiting.is_set)
        await cancel()
        await wait_for(lambda: probe.cancelled == [31])
        await wait_for(lambda: server_inflight(server).count == 0)
        after = await entry.call(32, "ok")
        assert after is not None and after["id"] == 32 and after["result"]["ok"] is True
