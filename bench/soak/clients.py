"""One client process of the soak benchmark (``run.py`` starts several and merges their output).

    python bench/soak/clients.py --url URL --first N --count K --start T0 --seconds S
        --warmup W --think T --out result.json

Runs clients ``N .. N+K-1`` from ``T0`` (a ``time.monotonic()`` instant, shared by every
process on the machine) for ``S`` seconds. Each client is an mcpbind ``Client`` over
Streamable HTTP (2025-11-25, with its GET stream) on its own ``httpx2`` connection pool,
looping over a weighted mix about ``T`` seconds apart: ``echo`` calls (the measured latency,
kept once the warm-up ``W`` is over), calls cancelled mid-flight, sessions created and deleted,
2026-07-28 stateless calls, a ``def`` tool. Besides, client ``n % 5 == 4`` reads a
``subscriptions/listen`` stream (odd ``n``) or a GET stream (even ``n``) slowly, and client
``n % 5 == 2`` keeps a 2026-07-28 ``Client.listen()`` subscription, closed and reopened every
30 s; client ``n % 10 == 3`` floods itself (``flood``: progress and log messages as fast as
the server sends them, all read) every ``FLOOD_EVERY`` seconds, and client ``n % 10 == 8``
calls ``flood`` on a socket of its own and never reads the response, for ``STREAM_SECONDS``
at a time (the server must bound what it queues for it and free it when it goes). Every operation has a deadline; past ``S`` plus ``--grace`` the tasks still running
are reported as hung (with their stacks on stderr) and cancelled. The result file is written
before the process shuts its event loop down.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import faulthandler
import json
import random
import re
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx2

from mcpbind import LATEST_HANDSHAKE, LATEST_STATELESS, Client, ClientHandlers, RequestOptions
from mcpbind import types as t
from mcpbind.http.client import connect_http

MIX = (("echo", 70), ("cancel", 10), ("churn", 8), ("stateless", 8), ("count", 4))
OP = RequestOptions(timeout=10)
"""Every call's deadline: a lost answer is an error after 10 s, never a hang."""
STREAM_SECONDS = 30.0
"""How long a slow reader, listener or non-reader keeps one stream before opening the next."""
FLOOD_EVERY = 5.0
"""Seconds between a flooder's calls of ``flood``."""
FLOOD_READ = 500
"""Progress notifications (and log messages) a flooder asks for and reads, per call."""
FLOOD_UNREAD = 1_000_000
"""What a non-reader asks for: more than the server can send before the reader goes."""
META = {
    "io.modelcontextprotocol/protocolVersion": LATEST_STATELESS,
    "io.modelcontextprotocol/clientInfo": {"name": "soak", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    ops: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    streamed: int = 0
    notifications: int = 0
    measuring: bool = False
    #: task name -> what it is doing now (for the report of a hang).
    running: dict[str, str] = field(default_factory=dict)
    hung: list[str] = field(default_factory=list)
    #: error kind -> [how many, the first one's message] (see :func:`error_kind`).
    kinds: dict[str, list[Any]] = field(default_factory=dict)

    def error(self, where: str, exc: BaseException) -> None:
        message = f"{where}: {type(exc).__name__}: {exc}"[:300]
        self.errors.append(message)
        entry = self.kinds.setdefault(error_kind(where, exc), [0, message])
        entry[0] += 1

    def as_json(self) -> dict[str, Any]:
        return {
            "latencies": self.latencies,
            "ops": self.ops,
            "errors": len(self.errors),
            "kinds": self.kinds,
            "first_errors": self.errors[:10],
            "streamed": self.streamed,
            "notifications": self.notifications,
            "hung": self.hung,
        }


def error_kind(where: str, exc: BaseException) -> str:
    """What kind of error: the operation, the exception type, its JSON-RPC code and the HTTP
    status it names, if any (``echo: PeerError -32600 HTTP 400``), so a report groups a
    run's errors by cause and a failure explains itself."""
    kind = f"{where}: {type(exc).__name__}"
    code = getattr(exc, "code", None)
    if isinstance(code, int):
        kind += f" {code}"
    status = re.search(r"\bHTTP (\d{3})\b", str(exc))
    if status is not None:
        kind += f" HTTP {status.group(1)}"
    return kind


def pool() -> httpx2.AsyncClient:
    """One connection pool per client (an application), shared by all its sessions."""
    return httpx2.AsyncClient(follow_redirects=True, timeout=httpx2.Timeout(10.0, read=None))


async def echo(client: Client, stats: Stats, text: str) -> None:
    start = time.perf_counter()
    result = await client.call("echo", {"text": text}, options=OP)
    if stats.measuring:
        stats.latencies.append(time.perf_counter() - start)
    block = result.content[0]
    if getattr(block, "text", None) != text:
        raise AssertionError(f"echo answered {block!r}")


async def worker(
    n: int, url: str, deadline: float, think: float, stats: Stats, http: httpx2.AsyncClient
) -> None:
    me = f"client {n}"
    rng = random.Random(n)
    names = [name for name, _ in MIX]
    weights = [weight for _, weight in MIX]
    stats.running[me] = "connecting"
    async with (
        connect_http(url, client=http) as transport,
        Client(transport, protocol_version=LATEST_HANDSHAKE) as client,
    ):
        done = 0
        while time.monotonic() < deadline:
            # Every kind once first (so even a short run covers the mix), then weighted.
            op = names[done] if done < len(names) else rng.choices(names, weights)[0]
            done += 1
            stats.running[me] = f"op {op}"
            try:
                if op == "echo":
                    await echo(client, stats, f"c{n}")
                elif op == "count":
                    await client.call("count", {"n": 1000}, options=OP)
                elif op == "cancel":
                    with anyio.move_on_after(rng.uniform(0.005, 0.05)):
                        await client.call("slow", {"seconds": 5}, options=OP)
                else:
                    version = LATEST_HANDSHAKE if op == "churn" else LATEST_STATELESS
                    async with (
                        connect_http(url, client=http) as other,
                        Client(other, protocol_version=version) as fresh,
                    ):
                        await echo(fresh, stats, op)
            except Exception as exc:
                stats.error(op, exc)
            stats.ops[op] = stats.ops.get(op, 0) + 1
            stats.running[me] = "thinking"
            await anyio.sleep(think * rng.uniform(0.5, 1.5))
        stats.running[me] = "closing its session"


async def slow_reader(
    n: int, url: str, deadline: float, stats: Stats, http: httpx2.AsyncClient
) -> None:
    """A stream read 256 bytes a second off its socket: a listen stream (odd n) or a GET
    stream. The server outpaces it, so its writes block and its queue must stay bounded."""
    me = f"slow reader {n}"
    while time.monotonic() < deadline:
        stats.running[me] = "reading"
        until = min(deadline, time.monotonic() + STREAM_SECONDS)
        try:
            if n % 2:
                await _listen_slowly(url, until, stats)
            else:
                await _get_slowly(http, url, until, stats)
        except Exception as exc:
            stats.error("slow reader", exc)
            await anyio.sleep(1)
    stats.running[me] = "closing"


async def _read_slowly(
    url: str,
    method: str,
    headers: dict[str, str],
    body: bytes,
    until: float,
    stats: Stats,
    *,
    read: bool = True,
) -> None:
    """Send one HTTP/1.1 request on a socket of its own (a small receive buffer), check the
    status line, then read 256 bytes a second (``read=False``: nothing at all) until ``until``
    or the end of the stream. Bounded by ``until`` whatever the server sends (a quiet stream
    included)."""
    where = httpx2.URL(url)
    headers = {"host": f"{where.host}:{where.port}", "content-length": str(len(body)), **headers}
    request = f"{method} {where.raw_path.decode()} HTTP/1.1\r\n"
    request += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    async with await anyio.connect_tcp(where.host, where.port or 80) as stream:
        sock = stream.extra(anyio.abc.SocketAttribute.raw_socket)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        await stream.send(request.encode() + b"\r\n" + body)
        first = await stream.receive(256)
        if not first.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"{method} answered {first[:200]!r}")
        if not read:
            await anyio.sleep(max(0.0, until - time.monotonic()))
            return
        with anyio.move_on_after(until - time.monotonic()):
            while True:
                await anyio.sleep(1.0)
                try:
                    await stream.receive(256)
                except anyio.EndOfStream:
                    return  # the server ended the stream (a graceful close)
                stats.streamed += 1


async def _listen_slowly(url: str, until: float, stats: Stats) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "subscriptions/listen",
        "params": {
            "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["soak://tick"]},
            "_meta": META,
        },
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": LATEST_STATELESS,
        "mcp-method": "subscriptions/listen",
    }
    await _read_slowly(url, "POST", headers, json.dumps(message).encode(), until, stats)


async def flooder(
    n: int, url: str, deadline: float, stats: Stats, http: httpx2.AsyncClient
) -> None:
    """A client that asks for ``FLOOD_READ`` progress notifications and log messages every
    ``FLOOD_EVERY`` seconds and reads every one (a 2025-11-25 session, log level info)."""
    me = f"flooder {n}"

    async def count(method: str, params: Any) -> None:
        stats.notifications += 1

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        stats.notifications += 1

    options = RequestOptions(timeout=30, on_progress=progress)
    async with (
        connect_http(url, client=http) as transport,
        Client(
            transport,
            protocol_version=LATEST_HANDSHAKE,
            handlers=ClientHandlers(notification=count),
        ) as client,
    ):
        await client.set_level(t.SetLevelRequestParams(level="info"))
        while time.monotonic() < deadline:
            stats.running[me] = "flooding"
            try:
                result = await client.call("flood", {"n": FLOOD_READ}, options=options)
                if result.is_error:
                    raise RuntimeError(f"flood answered an error: {result.content!r}")
            except Exception as exc:
                stats.error("flooder", exc)
            stats.ops["flood"] = stats.ops.get("flood", 0) + 1
            stats.running[me] = "thinking"
            await anyio.sleep(max(0.0, min(FLOOD_EVERY, deadline - time.monotonic())))
    stats.running[me] = "closing"


async def non_reader(
    n: int, url: str, deadline: float, stats: Stats, http: httpx2.AsyncClient
) -> None:
    """A ``tools/call`` of ``flood`` (with a progress token) on a socket of its own, whose
    response is never read: held ``STREAM_SECONDS``, then closed. Turn about on the
    2026-07-28 wire and in a 2025-11-25 session (the per-request SSE stream of each)."""
    me = f"non-reader {n}"
    turn = 0
    while time.monotonic() < deadline:
        stats.running[me] = "not reading"
        until = min(deadline, time.monotonic() + STREAM_SECONDS)
        try:
            if turn % 2:
                await _flood_unread_in_session(n, url, until, stats, http)
            else:
                await _flood_unread(n, url, until, stats, {}, {**META, "progressToken": n})
            stats.ops["unread"] = stats.ops.get("unread", 0) + 1
        except Exception as exc:
            stats.error("non-reader", exc)
            await anyio.sleep(1)
        turn += 1
    stats.running[me] = "closing"


async def _flood_unread(
    n: int, url: str, until: float, stats: Stats, headers: dict[str, str], meta: dict[str, Any]
) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "flood", "arguments": {"n": FLOOD_UNREAD}, "_meta": meta},
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": LATEST_STATELESS,
        "mcp-method": "tools/call",
        "mcp-name": "flood",
        **headers,
    }
    body = json.dumps(message).encode()
    await _read_slowly(url, "POST", headers, body, until, stats, read=False)


async def _flood_unread_in_session(
    n: int, url: str, until: float, stats: Stats, http: httpx2.AsyncClient
) -> None:
    async with (
        connect_http(url, client=http, open_get_stream=False) as transport,
        Client(transport, protocol_version=LATEST_HANDSHAKE) as client,
    ):
        session = {
            "mcp-session-id": str(transport.session_id),
            "mcp-protocol-version": client.protocol_version or LATEST_HANDSHAKE,
        }
        await _flood_unread(n, url, until, stats, session, {"progressToken": n})


async def _get_slowly(http: httpx2.AsyncClient, url: str, until: float, stats: Stats) -> None:
    # The session's only GET stream is this raw one (the transport opens none), subscribed
    # to the resource the server marks updated every tick.
    async with (
        connect_http(url, client=http, open_get_stream=False) as transport,
        Client(transport, protocol_version=LATEST_HANDSHAKE) as client,
    ):
        await client.listen(resource_uris=["soak://tick"])
        headers = {
            "accept": "text/event-stream",
            "mcp-session-id": str(transport.session_id),
            "mcp-protocol-version": client.protocol_version or LATEST_HANDSHAKE,
        }
        await _read_slowly(url, "GET", headers, b"", until, stats)


async def listener(
    n: int, url: str, deadline: float, stats: Stats, http: httpx2.AsyncClient
) -> None:
    """A 2026-07-28 client that keeps a ``subscriptions/listen`` subscription (read promptly
    by the client), closed and reopened with its client every ``STREAM_SECONDS``."""
    me = f"listener {n}"

    async def count(method: str, params: Any) -> None:
        stats.notifications += 1

    handlers = ClientHandlers(notification=count)
    while time.monotonic() < deadline:
        stats.running[me] = "listening"
        try:
            async with (
                connect_http(url, client=http) as transport,
                Client(transport, protocol_version=LATEST_STATELESS, handlers=handlers) as c,
            ):
                sub = await c.listen(tools_list_changed=True, resource_uris=["soak://tick"])
                await anyio.sleep(max(0.0, min(deadline - time.monotonic(), STREAM_SECONDS)))
                stats.running[me] = "closing its subscription"
                with anyio.fail_after(10):
                    await sub.close()
                stats.running[me] = "closing its client"
        except Exception as exc:
            stats.error("listener", exc)
            await anyio.sleep(1)
    stats.running[me] = "done"


def dump_tasks(why: str) -> None:
    """Every task's await chain, innermost last (``Task.print_stack`` stops at the first)."""
    print(f"--- {why}: asyncio tasks ---", file=sys.stderr)
    for task in asyncio.all_tasks():
        print(f"task {task.get_name()}:", file=sys.stderr)
        step: Any = task.get_coro()
        while step is not None:
            frame = getattr(step, "cr_frame", None) or getattr(step, "ag_frame", None)
            if frame is not None:
                code = frame.f_code
                print(f"  {code.co_filename}:{frame.f_lineno} {code.co_name}", file=sys.stderr)
            step = getattr(step, "cr_await", None) or getattr(step, "ag_await", None)
    sys.stderr.flush()


async def run(args: argparse.Namespace, stats: Stats) -> None:
    deadline = args.start + args.seconds
    all_done = anyio.Event()

    async def watched(name: str, job: Callable[[], Awaitable[None]]) -> None:
        stats.running[name] = "starting"
        try:
            await job()
        except Exception as exc:
            stats.error(name, exc)
        finally:
            stats.running.pop(name, None)
            if not stats.running:
                all_done.set()

    async def hang() -> None:  # --hang: a task that ignores cancellation (run.py's own test)
        with anyio.CancelScope(shield=True):
            await anyio.sleep(deadline + args.grace + 3600 - time.monotonic())

    async with contextlib.AsyncExitStack() as pools:
        # Every pool is built before the start: building one loads the CA store (~70 ms of
        # blocked event loop on this machine, 200 ms loaded), so ~35 of them built at the
        # start stalled this process for seconds, and a listener's first server/discover,
        # sent among them, ran out of its 10 s probe deadline (issue 16, 2 errors a run).
        jobs: list[tuple[str, Callable[[], Awaitable[None]]]] = []
        if args.hang:
            jobs.append(("injected hang", hang))
        for n in range(args.first, args.first + args.count):
            http = await pools.enter_async_context(pool())
            work = partial(worker, n, args.url, deadline, args.think, stats, http)
            jobs.append((f"client {n}", work))
            if n % 5 in (2, 4):
                kind, stream = (
                    ("listener", listener) if n % 5 == 2 else ("slow reader", slow_reader)
                )
                http = await pools.enter_async_context(pool())
                jobs.append((f"{kind} {n}", partial(stream, n, args.url, deadline, stats, http)))
            if n % 10 in (3, 8):
                kind, flood = ("flooder", flooder) if n % 10 == 3 else ("non-reader", non_reader)
                http = await pools.enter_async_context(pool())
                jobs.append((f"{kind} {n}", partial(flood, n, args.url, deadline, stats, http)))
        await anyio.sleep(max(0.0, args.start - time.monotonic()))
        async with anyio.create_task_group() as tg:
            for name, job in jobs:
                tg.start_soon(watched, name, job)
            await anyio.sleep(max(0.0, args.start + args.warmup - time.monotonic()))
            stats.measuring = True
            with anyio.move_on_after(deadline + args.grace - time.monotonic()):
                await all_done.wait()
            if stats.running:
                stats.hung = [f"{name} ({doing})" for name, doing in sorted(stats.running.items())]
                dump_tasks(f"still running {args.grace:g} s after the end")
                args.out.write_text(json.dumps(stats.as_json()))  # in case cancelling hangs too
                tg.cancel_scope.cancel()
    args.out.write_text(json.dumps(stats.as_json()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--first", type=int, default=0, help="number of the first client")
    parser.add_argument("--count", type=int, required=True, help="clients in this process")
    parser.add_argument("--start", type=float, required=True, help="time.monotonic() to start")
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--warmup", type=float, required=True)
    parser.add_argument("--think", type=float, default=1.0)
    parser.add_argument("--grace", type=float, default=20.0, help="seconds allowed to close")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--hang", action="store_true", help="add a task that never ends (tests)")
    args = parser.parse_args()
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # run.py asks before a kill
    stats = Stats()
    asyncio.run(run(args, stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
