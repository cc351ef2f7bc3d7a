"""Issue 28 (F14): ``retry: 0`` from a server made the HTTP client reconnect 16,648 times a
minute. Every reconnecting loop now waits at least ``min_reconnect_delay`` (0.1 s), doubling
while attempts bring nothing, up to a cap, with jitter (mcpbind.transports.backoff): the
Streamable HTTP GET stream, the resumption of a request's stream (2025-11-25
basic/transports.mdx §Resumability: the client waits the server's ``retry``), and the
2026-07-28 ``subscriptions/listen`` stream (subscriptions.mdx §Graceful Closure: the client
MAY reconnect). The 2024-11-05 legacy stream is never reopened (the transport closes).

The gaps are measured by the server between the requests it received: each is the client's
wait plus a round trip, so never below the wait, however loaded the machine is."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import httpx2
import pytest

from mcpbind import Client, types
from mcpbind.http.client import StreamableHTTPTransport, connect_http
from mcpbind.transports.backoff import MAX_RECONNECT_DELAY, MIN_RECONNECT_DELAY, reconnect_delay

from ._support import Running, server

pytestmark = pytest.mark.anyio

ERA = "2025-11-25"
#: The shortest waits the backoff allows for the first attempts: 0.1, 0.2, 0.4, 0.8 s.
FLOORS = [MIN_RECONNECT_DELAY * 2**i for i in range(4)]


@pytest.fixture(scope="module")
def fault() -> Iterator[Running]:
    with server("fault") as running:
        yield running


async def _until(check: Callable[[], bool]) -> None:
    """Bounded polling of the server's log (it is another process: no event to wait on)."""
    for _ in range(1200):
        if check():
            return
        await anyio.sleep(0.05)
    raise AssertionError("not within 60 s")


def _gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(times)]


def _doubling_from_the_floor(gaps: list[float]) -> bool:
    return all(gap >= floor * 0.99 for gap, floor in zip(gaps, FLOORS, strict=False))


def test_the_delay_has_a_floor_a_cap_and_jitter() -> None:
    """``retry: 0`` waits the floor; each fruitless attempt doubles it; the cap holds; the
    jitter adds at most a quarter and never takes anything off (``retry`` is a minimum)."""
    first = [reconnect_delay(0.0, 0) for _ in range(200)]
    assert all(MIN_RECONNECT_DELAY <= d <= MIN_RECONNECT_DELAY * 1.25 for d in first)
    assert len(set(first)) > 1  # jittered
    assert all(reconnect_delay(0.0, 3) >= 0.8 for _ in range(50))
    assert all(reconnect_delay(2.0, 0) >= 2.0 for _ in range(50))  # the server's retry
    capped = [reconnect_delay(1.0, 1000) for _ in range(50)]
    assert all(MAX_RECONNECT_DELAY <= d <= MAX_RECONNECT_DELAY * 1.25 for d in capped)


async def test_get_stream_with_retry_zero_backs_off(fault: Running) -> None:
    """A GET stream that is only a priming event with ``retry: 0`` and ends at once is
    reopened after 0.1 s, then 0.2, 0.4, 0.8 s: not in a loop."""
    async with (
        connect_http(fault.base + "/mcp", headers={"x-get-retry0": "1"}) as transport,
        Client(transport, protocol_version=ERA),
    ):

        def gets() -> list[float]:
            entries = [e for e in fault.log() if e["headers"].get("x-get-retry0") == "1"]
            return [e["t"] for e in entries if e["http"] == "GET"]

        await _until(lambda: len(gets()) >= 5)
        times = gets()
    gaps = _gaps(times)
    assert _doubling_from_the_floor(gaps), gaps


async def test_resumption_with_retry_zero_backs_off(fault: Running) -> None:
    """§Resumability: a request's stream that ends after a priming event with ``retry: 0``,
    and resumptions that bring nothing, are resumed after 0.1, 0.2, 0.4, 0.8 s; the answer
    arrives on the fourth."""
    async with Client(fault.base + "/mcp", protocol_version=ERA) as client:
        result = await client.call("poll0")
    block = result.content[0]
    assert isinstance(block, types.TextContent) and block.text == "polled"
    log = fault.log()
    post = max(e["t"] for e in log if e.get("rpc") == "tools/call")
    resumes = [
        e["t"]
        for e in log
        if e["http"] == "GET" and e["headers"].get("last-event-id", "").startswith("poll0")
    ]
    assert len(resumes) == 4
    gaps = _gaps([post, *resumes])
    assert _doubling_from_the_floor(gaps), gaps


def test_listen_reissued_after_each_break_backs_off(fresh_mock: Running) -> None:
    """2026-07-28 subscriptions/listen: a server that acknowledges each listen request and
    breaks its stream at once gets it again after 0.1, 0.2, 0.4, 0.8 s, not every 0.1 s."""

    def listens() -> list[dict[str, Any]]:
        return fresh_mock.requests("subscriptions/listen")

    async def go() -> None:
        async with (
            connect_http(fresh_mock.url, headers={"x-listen-break": "1"}) as transport,
            Client(transport, protocol_version="auto") as client,
        ):
            sub = await client.listen(tools_list_changed=True)
            await _until(lambda: len(listens()) >= 5)
            await sub.close()

    anyio.run(go)
    gaps = _gaps([e["t"] for e in listens()])
    assert _doubling_from_the_floor(gaps), gaps


async def test_stream_connections_failing_while_probes_answer_back_off() -> None:
    """A server that answers the client's probe (HEAD) but fails every connection of the GET
    stream (a TLS handshake, say): the stream is retried after 0.1, 0.2, 0.4 s, not in a loop
    of one probe and one connection attempt."""
    gets: list[float] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.method == "GET":
            gets.append(time.monotonic())
            raise httpx2.ConnectError("handshake failed", request=request)
        if request.method != "POST":  # HEAD (the probe: the server answers), DELETE
            return httpx2.Response(405)
        message = json.loads(request.content)
        if "id" not in message:
            return httpx2.Response(202)
        result = {
            "protocolVersion": ERA,
            "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"},
        }
        body = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        return httpx2.Response(200, json=body, headers={"mcp-session-id": "s-1"})

    async with (
        httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as http,
        # reconnect_delay=0: the floor (min_reconnect_delay) still holds.
        StreamableHTTPTransport(
            "http://server.test/mcp", client=http, reconnect_delay=0
        ) as transport,
        Client(transport, protocol_version=ERA),
    ):
        await _until(lambda: len(gets) >= 4)
    gaps = _gaps(gets[:4])
    assert _doubling_from_the_floor(gaps), gaps
