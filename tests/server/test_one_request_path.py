"""One request path for both protocol eras (issue 11; basic/versioning.mdx, dual-era server).

A 2025-11-25 request (after ``initialize``) and a 2026-07-28 request (per-request ``_meta``, no
handshake) on the same kind of connection go through the same accept-and-decode step
(``mcpbind.protocol.accept``: method table, capabilities, typed params) and the same in-flight
and cancel table (``Connection``): the same validation errors, the same capability errors,
the same cancellation (basic/utilities/cancellation.mdx), for a registered tool and a
registered custom method alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
import pytest

from mcpbind import LATEST_HANDSHAKE, LATEST_STATELESS, Server
from mcpbind.protocol import INVALID_PARAMS, METHOD_NOT_FOUND
from mcpbind.server.session import ServerSession
from mcpbind.transports import Transport, memory_pair

pytestmark = pytest.mark.anyio

ERAS = [LATEST_HANDSHAKE, LATEST_STATELESS]

META = {
    "io.modelcontextprotocol/protocolVersion": LATEST_STATELESS,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
}


class Probe:
    """What the registered handlers saw."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = False


def make_server(probe: Probe) -> Server:
    # No prompts registered: the prompts capability is not declared.
    server = Server("one-path", "1.0")

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def wait() -> str:
        probe.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            probe.cancelled = True
            raise
        return "never"

    @server.method("acme/echo")
    async def echo(params: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {"echo": params.get("text")}

    return server


class Wire:
    """A raw JSON-RPC client on one end of an in-memory connection, speaking one era."""

    def __init__(self, end: Transport, version: str) -> None:
        self.end = end
        self.version = version

    def params(self, params: dict[str, Any] | None = None) -> dict[str, Any]:
        params = dict(params or {})
        if self.version == LATEST_STATELESS:
            params["_meta"] = META
        return params

    async def send(self, message: dict[str, Any]) -> None:
        await self.end.send(msgspec.json.encode(message))

    async def request(self, rid: int, method: str, params: Any) -> None:
        await self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(10):
            message: dict[str, Any] = msgspec.json.decode(await self.end.receive())
            return message

    async def call(self, rid: int, method: str, params: Any) -> dict[str, Any]:
        await self.request(rid, method, params)
        return await self.receive()


@asynccontextmanager
async def connected(version: str, probe: Probe) -> AsyncIterator[tuple[Wire, ServerSession]]:
    client_end, server_end = memory_pair()
    session = ServerSession(make_server(probe), server_end)
    wire = Wire(client_end, version)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        if version == LATEST_HANDSHAKE:
            init = {
                "protocolVersion": LATEST_HANDSHAKE,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            }
            assert "result" in await wire.call(0, "initialize", init)
            await wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield wire, session
        assert session.era == ("handshake" if version == LATEST_HANDSHAKE else "stateless")
        await client_end.aclose()
        tg.cancel_scope.cancel()


async def errors_on(version: str) -> dict[str, dict[str, Any]]:
    probe = Probe()
    async with connected(version, probe) as (wire, _):
        p = wire.params
        found = {
            "missing name": await wire.call(1, "tools/call", p({"arguments": {}})),
            "wrong type": await wire.call(2, "tools/call", p({"name": 5})),
            "arguments not an object": await wire.call(
                3, "tools/call", p({"name": "add", "arguments": [1]})
            ),
            "undeclared capability": await wire.call(4, "prompts/list", p()),
            "unknown method": await wire.call(5, "acme/nothing", p()),
        }
        ok = await wire.call(6, "tools/call", p({"name": "add", "arguments": {"a": 1, "b": 2}}))
        assert ok["result"]["content"][0]["text"] == "3"
        echoed = await wire.call(7, "acme/echo", p({"text": "hi"}))
        assert echoed["result"]["echo"] == "hi"
    return {what: reply["error"] for what, reply in found.items()}


async def test_validation_and_capability_errors_are_the_same_on_both_eras() -> None:
    """schema.mdx / basic/index.mdx: -32602 for params that do not fit the method, -32601
    for a method the server does not serve (unknown, or its capability not declared:
    server/prompts.mdx §Capabilities); the same code and message on both eras."""
    handshake = await errors_on(LATEST_HANDSHAKE)
    stateless = await errors_on(LATEST_STATELESS)
    assert handshake == stateless
    assert handshake["missing name"]["code"] == INVALID_PARAMS
    assert "name" in handshake["missing name"]["message"]
    assert handshake["wrong type"]["code"] == INVALID_PARAMS
    assert handshake["arguments not an object"]["code"] == INVALID_PARAMS
    assert handshake["undeclared capability"] == {
        "code": METHOD_NOT_FOUND,
        "message": "Method not found: prompts/list (capability 'prompts' not declared)",
    }
    assert handshake["unknown method"]["code"] == METHOD_NOT_FOUND


async def wait_until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(10):
        while not condition():  # noqa: ASYNC110 - polling state the session updates
            await asyncio.sleep(0.01)


@pytest.mark.parametrize("version", ERAS)
async def test_cancellation_is_the_same_on_both_eras(version: str) -> None:
    """basic/utilities/cancellation.mdx: the handler named by ``notifications/cancelled`` is
    interrupted and nothing is sent for it; the request is in the connection's one in-flight
    table while it runs, whichever era it came in on, and leaves it when cancelled."""
    probe = Probe()
    async with connected(version, probe) as (wire, session):
        await wire.request(9, "tools/call", wire.params({"name": "wait"}))
        with anyio.fail_after(10):
            await probe.started.wait()
        assert session.connection.runner.inflight() == [9]
        assert session.core.inflight_ids() == [9]
        cancel = {"requestId": 9, "reason": "no longer needed"}
        await wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        await wait_until(lambda: probe.cancelled and session.connection.idle)
        # The next answer on the wire is the next request's: nothing was sent for id 9.
        reply = await wire.call(
            10, "tools/call", wire.params({"name": "add", "arguments": {"a": 2, "b": 2}})
        )
        assert reply["id"] == 10 and reply["result"]["content"][0]["text"] == "4"
        assert session.core.inflight_ids() == []


async def test_capabilities_follow_registrations_on_2026() -> None:
    """server/prompts.mdx §Capabilities: a 2026-07-28 request is checked against what the
    server declares now (kept encoded, rebuilt when a registration changes it)."""
    probe = Probe()
    async with connected(LATEST_STATELESS, probe) as (wire, session):
        before = await wire.call(1, "prompts/list", wire.params())
        assert before["error"]["code"] == METHOD_NOT_FOUND

        @session.server.prompt()
        def hello() -> str:
            return "hi"

        after = await wire.call(2, "prompts/list", wire.params())
        assert [p["name"] for p in after["result"]["prompts"]] == ["hello"]


async def test_usual_2026_results_are_completed_on_a_connection_as_answer_completes_them() -> None:
    """basic/index.mdx (resultType, serverInfo in every result's _meta) and caching.mdx (cache
    hints): a 2026-07-28 request on a connection runs as its handler's own coroutine and its
    result is completed as the connection encodes it; the response is the one ``answer()``
    (the HTTP path, run_request) gives, refusals included (mrtr.mdx: input_required only on
    tools/call, prompts/get and resources/read)."""
    from mcpbind.server.dispatch import answer

    server = make_server(Probe())

    @server.method("acme/ask")
    async def ask(params: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {"resultType": "input_required", "inputRequests": {}}

    requests = [
        ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
        ("tools/list", {}),
        ("acme/echo", {"text": "hi"}),
        ("acme/ask", {}),
    ]
    client_end, server_end = memory_pair()
    wire = Wire(client_end, LATEST_STATELESS)
    on_connection = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(ServerSession(server, server_end).run)
        for rid, (method, params) in enumerate(requests, 1):
            on_connection.append(await wire.call(rid, method, wire.params(params)))
        await client_end.aclose()
        tg.cancel_scope.cancel()
    by_answer = []
    for rid, (method, params) in enumerate(requests, 1):
        raw = msgspec.Raw(msgspec.json.encode(wire.params(params)))
        by_answer.append(msgspec.json.decode((await answer(server, rid, method, raw)).data))
    assert on_connection == by_answer
    called, listed, echoed, asked = on_connection
    assert called["result"]["resultType"] == "complete"
    assert called["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "one-path"
    assert "ttlMs" in listed["result"] and listed["result"]["resultType"] == "complete"
    assert echoed["result"] == {
        "echo": "hi",
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "one-path", "version": "1.0"}},
    }
    assert "cannot answer input_required" in asked["error"]["message"]
