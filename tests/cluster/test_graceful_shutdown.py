"""SIGTERM to one worker of a cluster hands its streams back (docs/guides/deployment.md,
graceful shutdown): the requests in flight on it run to their answers, and its long-lived
streams end so their clients reconnect through the balancer to the other workers: a
handshake-era ``GET`` stream resumes with ``Last-Event-ID`` (basic/transports.mdx, Resumability
and Redelivery) from the shared event store, each event delivered once; a 2026-07-28 listen
stream ends without its final result (basic/patterns/subscriptions.mdx, Graceful Closure:
an unexpected disconnect) and the client listens again on another worker."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import pytest

from mcpbind import Client, ClientHandlers
from mcpbind.http import StreamableHTTPTransport

from .clients import Tags, tagged_client
from .processes import haproxy, worker_process
from .wire import HANDSHAKE, META, SSE, VERSION, messages

pytestmark = pytest.mark.anyio


@contextmanager
def _workers(
    count: int, options: dict[str, Any]
) -> Iterator[list[tuple[int, subprocess.Popen[bytes]]]]:
    with ExitStack() as stack:
        yield [stack.enter_context(worker_process(f"w{i}", options=options)) for i in range(count)]


class Notes:
    """The notifications a client received; ``wait_for(method, n)``: until ``n`` of them."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self._changed = anyio.Event()

    async def note(self, method: str, params: Any) -> None:
        self.methods.append(method)
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, method: str, count: int) -> None:
        while self.methods.count(method) < count:
            await self._changed.wait()


UPDATED = "notifications/resources/updated"
#: How a worker stopped by SIGTERM exits: uvicorn re-raises the signal once it has shut down
#: gracefully (0 with an older uvicorn); never a crash (1) nor SIGKILL.
_STOPPED = (0, -signal.SIGTERM)
#: Seconds a stopping worker gives the requests still running. A stream it did not hand back
#: would hold it that long: one that stops well before has handed its streams back.
GRACE = 8


async def _in_flight(url: str, session: str) -> list[Any]:
    """Two slow calls sent straight to one worker: a handshake-era one of ``session`` (which
    that worker relays to the session's owner) and a 2026-07-28 one it runs itself."""
    count = {"name": "count", "arguments": {"to": 40}}
    relayed = {"jsonrpc": "2.0", "id": 70, "method": "tools/call", "params": count}
    own = {"jsonrpc": "2.0", "id": 71, "method": "tools/call", "params": {**count, "_meta": META}}
    headers_25 = {**SSE, "mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
    headers_26 = {**SSE, "mcp-protocol-version": VERSION, "mcp-method": "tools/call"}
    results: list[Any] = [None, None]
    async with httpx.AsyncClient(timeout=20) as http, anyio.create_task_group() as tg:

        async def send(i: int, body: dict[str, Any], headers: dict[str, str]) -> None:
            response = await http.post(url, json=body, headers={**headers, "mcp-name": "count"})
            (answer,) = [m for m in messages(response) if m.get("id") == body["id"]]
            results[i] = answer["result"]["structuredContent"]

        tg.start_soon(send, 0, relayed, headers_25)
        tg.start_soon(send, 1, own, headers_26)
    return results


async def test_a_relayed_get_stream_resumes_elsewhere_and_in_flight_calls_finish(
    redis_url: str, tmp_path: Path
) -> None:
    options = {
        "redis_sessions": redis_url,
        "redis_events": redis_url,
        "shutdown_timeout": GRACE,
    }
    tags, notes = Tags(), Notes()
    with _workers(3, options) as procs, haproxy([p for p, _ in procs], tmp_path) as url:
        hooks = {"request": [tags.request], "response": [tags.response]}
        async with (
            httpx.AsyncClient(event_hooks=hooks) as http,
            StreamableHTTPTransport(url, client=http, reconnect_delay=0.2) as transport,
            Client(
                transport,
                protocol_version=HANDSHAKE,
                timeout=20,
                handlers=ClientHandlers(notification=notes.note),
            ) as client,
        ):
            with anyio.fail_after(40):
                while not [w for m, w in tags.sent if m == "GET" and w]:  # noqa: ASYNC110
                    await anyio.sleep(0.05)  # its GET stream opens after the handshake
                owner = tags.sent[0][1]
                (stream_on,) = [w for m, w in tags.sent if m == "GET"]
                assert stream_on != owner  # relayed to the owner by another worker
                port, stopping = procs[int(stream_on.removeprefix("w"))]
                await client.listen(resource_uris=["mem://note"])
                for _ in range(3):
                    await client.call("touch", {"uri": "mem://note"})
                await notes.wait_for(UPDATED, 3)
                assert transport.session_id is not None
                async with anyio.create_task_group() as tg:
                    finished: list[Any] = []

                    async def in_flight() -> None:
                        finished.extend(
                            await _in_flight(f"http://127.0.0.1:{port}/mcp", transport.session_id)
                        )

                    tg.start_soon(in_flight)
                    await anyio.sleep(0.3)  # both calls are running
                    os.kill(stopping.pid, signal.SIGTERM)
                    killed = anyio.current_time()
                await anyio.to_thread.run_sync(stopping.wait, GRACE + 5)  # drained, then gone
                took = anyio.current_time() - killed
                for _ in range(3):  # the stream was handed back: kept in the event store
                    await client.call("touch", {"uri": "mem://note"})
                await notes.wait_for(UPDATED, 6)
                await anyio.sleep(0.5)  # room for a duplicate, if one were coming
    assert finished == [{"result": 40}, {"result": 40}]  # drained, not cancelled
    assert stopping.returncode in _STOPPED and took < GRACE / 2  # nothing held it
    assert notes.methods.count(UPDATED) == 6  # each event once
    assert tags.resumes and all(w not in ("", stream_on) for _, w in tags.resumes), tags.sent


async def test_a_listen_stream_is_handed_to_another_worker(redis_url: str, tmp_path: Path) -> None:
    options = {"redis_bus": redis_url, "shutdown_timeout": GRACE}
    tags, notes = Tags(), Notes()
    acked = "notifications/subscriptions/acknowledged"
    with _workers(2, options) as procs, haproxy([p for p, _ in procs], tmp_path) as url:
        async with tagged_client(url, VERSION, tags, notification=notes.note) as client:
            with anyio.fail_after(30):
                subscription = await client.listen(resource_uris=["mem://note"])
                first = tags.sent[-1][1]
                _, stopping = procs[int(first.removeprefix("w"))]
                survivor, _ = procs[1 - int(first.removeprefix("w"))]
                os.kill(stopping.pid, signal.SIGTERM)
                killed = anyio.current_time()
                await notes.wait_for(acked, 2)  # listening again
                again = tags.sent[-1][1]
                await anyio.to_thread.run_sync(stopping.wait, GRACE + 5)
                took = anyio.current_time() - killed
                elsewhere = f"http://127.0.0.1:{survivor}/mcp"
                async with Client(elsewhere, protocol_version=VERSION) as actor:
                    await actor.call("touch", {"uri": "mem://note"})
                await notes.wait_for(UPDATED, 1)
                still = subscription.active  # listening on the survivor
    assert stopping.returncode in _STOPPED and took < GRACE / 2
    assert again != first and subscription.reconnects == 1 and still
