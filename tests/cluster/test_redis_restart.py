"""Redis restarted under load (docs/guides/deployment.md, "Failure modes"): clients keep calling
through haproxy round-robin over two workers while redis-server goes away and comes back.

- While it is down, a handshake-era request that needs the registry (``initialize``, a session
  owned by the other worker) gets 503 with ``Retry-After`` and a one-line JSON-RPC error; the
  owner still serves its own sessions; every 2026-07-28 request is answered as usual
  (basic/transports.mdx, Streamable HTTP: any worker answers a request without a session).
- Once it is back: new sessions open and roam; old sessions are served everywhere again when
  Redis kept its data (a persistent Redis restarted cleanly), and when it lost them (a crash of
  a Redis without persistence), each old session gets one 404 off its owner and its client
  re-initializes (basic/transports.mdx, Session Management: 404, then a new
  ``InitializeRequest``); changes cross workers again on the notification bus.
- Nothing hangs: every answer, refusals included, comes within ``BOUND``.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import pytest

from mcpbind import Client, ClientHandlers

from .processes import RestartableRedis, haproxy, workers
from .wire import HANDSHAKE, META, SSE, VERSION, messages

pytestmark = pytest.mark.anyio

BOUND = 3.0
"""Seconds within which every request is answered (the Redis timeout is 0.5 s)."""
HANDSHAKE_CLIENTS = 4
STATELESS_CLIENTS = 2
PAUSE = 0.02
"""Seconds between one client's requests."""

INIT = {
    "protocolVersion": HANDSHAKE,
    "capabilities": {},
    "clientInfo": {"name": "restart-test", "version": "0"},
}


@dataclass
class Tally:
    """What the clients saw, phase by phase: outcomes (``ok``, ``503``, ``404``, or anything
    unexpected, spelled out), the worker tags that answered, and the slowest answer."""

    phase: str = "before"
    outcomes: dict[str, Counter[str]] = field(default_factory=dict)
    tags: dict[str, set[str]] = field(default_factory=dict)
    slowest: float = 0.0
    refusals: list[tuple[str | None, dict[str, Any]]] = field(default_factory=list)

    def saw(self, outcome: str, response: httpx.Response | None, took: float) -> None:
        self.outcomes.setdefault(self.phase, Counter())[outcome] += 1
        self.slowest = max(self.slowest, took)
        if response is not None:
            tag = response.headers.get_list("x-test-worker")
            self.tags.setdefault(self.phase, set()).add(tag[-1] if tag else "?")
            if response.status_code == 503:
                self.refusals.append((response.headers.get("retry-after"), response.json()))


async def _post(
    http: httpx.AsyncClient, url: str, tally: Tally, body: dict[str, Any], headers: dict[str, str]
) -> httpx.Response | None:
    started = time.monotonic()
    try:
        response = await http.post(url, json=body, headers=headers)
    except httpx.HTTPError as exc:
        tally.saw(f"transport error {type(exc).__name__}", None, time.monotonic() - started)
        return None
    took = time.monotonic() - started
    if response.status_code in (404, 503):
        tally.saw(str(response.status_code), response, took)
    elif response.status_code in (200, 202):
        tally.slowest = max(tally.slowest, took)  # the caller tallies what it got
    else:
        tally.saw(f"HTTP {response.status_code}: {response.text[:100]}", response, took)
    return response


class HandshakeClient:
    """A 2025-11-25 session through the balancer: ``tools/call add`` in a loop; on 404 it
    re-initializes, on 503 it keeps its session and tries again."""

    def __init__(self, http: httpx.AsyncClient, url: str, tally: Tally) -> None:
        self.http, self.url, self.tally = http, url, tally
        self.session = ""
        self.sessions: list[str] = []
        self.next_id = 0

    def _headers(self) -> dict[str, str]:
        return {**SSE, "mcp-session-id": self.session, "mcp-protocol-version": HANDSHAKE}

    async def open(self) -> bool:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}
        response = await _post(self.http, self.url, self.tally, init, SSE)
        if response is None or response.status_code != 200:
            return False
        self.session = response.headers["mcp-session-id"]
        self.sessions.append(self.session)
        self.tally.saw("initialized", response, 0.0)
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        response = await _post(self.http, self.url, self.tally, note, self._headers())
        if response is not None and response.status_code == 404:
            self.session = ""  # Redis lost the entry between the two requests
        return True

    async def step(self) -> None:
        if not self.session:
            await self.open()
            return
        self.next_id += 1
        a, b = self.next_id, len(self.sessions)
        params = {"name": "add", "arguments": {"a": a, "b": b}}
        call = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params}
        response = await _post(self.http, self.url, self.tally, call, self._headers())
        if response is None:
            return
        if response.status_code == 404:
            self.session = ""  # its owner no longer has it registered: start again
        elif response.status_code == 200:
            (answer,) = [m for m in messages(response) if m.get("id") == self.next_id]
            right = answer.get("result", {}).get("structuredContent") == {"result": a + b}
            self.tally.saw("ok" if right else f"wrong answer {answer}", response, 0.0)


class StatelessClient:
    """2026-07-28 ``tools/call add`` requests through the balancer, no session."""

    def __init__(self, http: httpx.AsyncClient, url: str, tally: Tally) -> None:
        self.http, self.url, self.tally = http, url, tally
        self.next_id = 0

    async def step(self) -> None:
        self.next_id += 1
        params = {"name": "add", "arguments": {"a": self.next_id, "b": 1}, "_meta": META}
        call = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params}
        headers = {**SSE, "mcp-protocol-version": VERSION, "mcp-method": "tools/call"}
        response = await _post(self.http, self.url, self.tally, call, headers | {"mcp-name": "add"})
        if response is not None and response.status_code == 200:
            (answer,) = [m for m in messages(response) if m.get("id") == self.next_id]
            right = answer.get("result", {}).get("structuredContent") == {
                "result": self.next_id + 1
            }
            self.tally.saw("ok (2026)" if right else f"wrong answer {answer}", response, 0.0)


async def _drive(client: HandshakeClient | StatelessClient, stop: asyncio.Event) -> None:
    while not stop.is_set():
        await client.step()
        await asyncio.sleep(PAUSE)


async def _bus_carries_a_change(here: str, there: str) -> None:
    """A 2026-07-28 listener on ``there`` hears ``tools/list_changed`` raised on ``here``."""
    heard = anyio.Event()

    async def note(method: str, params: Any) -> None:
        if method == "notifications/tools/list_changed":
            heard.set()

    handlers = ClientHandlers(notification=note)
    async with (
        Client(there, protocol_version=VERSION, handlers=handlers) as listener,
        Client(here, protocol_version=VERSION) as actor,
    ):
        with anyio.fail_after(10):
            await listener.listen(tools_list_changed=True)
            await actor.call("flip", {})
            await heard.wait()


@pytest.mark.parametrize(
    ("persistent", "fault"),
    [(False, signal.SIGKILL), (True, signal.SIGTERM)],
    ids=["crash-data-lost", "clean-restart-data-kept"],
)
async def test_redis_restarted_under_load(
    persistent: bool, fault: signal.Signals, tmp_path: Path
) -> None:
    tally = Tally()
    with RestartableRedis(tmp_path, persistent) as redis:
        options = {"redis_sessions": redis.url, "redis_bus": redis.url}
        with workers(2, options=options) as ports, haproxy(ports, tmp_path) as url:
            limits = httpx.Timeout(10.0)
            async with httpx.AsyncClient(timeout=limits) as http:
                olds = [HandshakeClient(http, url, tally) for _ in range(HANDSHAKE_CLIENTS)]
                news = [StatelessClient(http, url, tally) for _ in range(STATELESS_CLIENTS)]
                for client in olds:
                    assert await client.open()
                here, there = (f"http://127.0.0.1:{port}/mcp" for port in ports)
                await _bus_carries_a_change(here, there)  # the publisher holds a connection
                stop = asyncio.Event()
                everyone: list[HandshakeClient | StatelessClient] = [*olds, *news]
                load = [asyncio.create_task(_drive(c, stop)) for c in everyone]
                try:
                    await asyncio.sleep(1.0)
                    tally.phase = "down"
                    await anyio.to_thread.run_sync(redis.stop, fault)
                    await asyncio.sleep(2.0)
                    tally.phase = "restart"  # requests in flight while it starts
                    await anyio.to_thread.run_sync(redis.start)
                    tally.phase = "after"
                    await asyncio.sleep(2.0)
                finally:
                    stop.set()
                    await asyncio.gather(*load)
                fresh = HandshakeClient(http, url, tally)
                assert await fresh.open()
                for _ in range(4):
                    await fresh.step()  # a new session, on both workers
            await _bus_carries_a_change(here, there)  # the same connection, after the restart

    before, down = tally.outcomes["before"], tally.outcomes["down"]
    after = tally.outcomes["after"]
    assert tally.slowest < BOUND, tally.outcomes
    assert set(before) == {"initialized", "ok", "ok (2026)"}, before
    # Down: the owners still serve their own sessions, the other worker refuses with 503.
    assert set(down) == {"ok", "ok (2026)", "503"}, down
    assert down["503"] > 0 and down["ok"] > 0 and down["ok (2026)"] > 0
    for retry_after, body in tally.refusals:
        assert retry_after == "1"
        assert body["error"]["code"] == -32600
        assert body["error"]["message"] == (
            "Service Unavailable: the session registry cannot be reached"
        )
    assert tally.tags["after"] == {"w0", "w1"}
    if persistent:
        # Redis kept the registry: every old session goes on, on both workers, no 404.
        assert set(after) == {"initialized", "ok", "ok (2026)"}, after
        assert all(len(c.sessions) == 1 for c in olds)
    else:
        # Redis lost the registry: each old session gets one 404 off its owner, and its
        # client re-initializes and goes on; nothing else fails.
        assert set(after) <= {"ok", "ok (2026)", "404", "initialized"}, after
        restarted = tally.outcomes.get("restart", Counter())
        assert after["404"] + restarted["404"] == HANDSHAKE_CLIENTS, (restarted, after)
        assert all(len(c.sessions) == 2 for c in olds)
    assert all(c.session for c in olds)  # every client ends with a live session
    assert fresh.session == fresh.sessions[0] and len(fresh.sessions) == 1
