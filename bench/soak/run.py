"""Soak benchmark (issue 16): one uvicorn worker serving ``server.py`` under a steady mix of
work for a long time; prints RSS at start and end (and its drift), errors, p50/p99 latency.

    python bench/soak/run.py [--seconds 1800] [--clients 50] [--json out.json]

Every client is an mcpbind ``Client`` over Streamable HTTP that loops over a weighted mix:
``echo`` calls on its session (the measured latency), calls cancelled mid-flight, sessions
created and deleted, 2026-07-28 stateless calls. One client in five also keeps a
``subscriptions/listen`` stream or a GET stream open and reads it slowly (a slow reader).
RSS is sampled once the warm-up (a tenth of the run, 5 to 60 s) is over, and at the end.
Not a timed test: ``make soak``; ``tests/bench/test_bench_soak_smoke.py`` runs it briefly.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2

from mcpbind import LATEST_HANDSHAKE, LATEST_STATELESS, Client, RequestOptions
from mcpbind.http.client import connect_http

HERE = Path(__file__).resolve().parent
META = {
    "io.modelcontextprotocol/protocolVersion": LATEST_STATELESS,
    "io.modelcontextprotocol/clientInfo": {"name": "soak", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
MIX = (("echo", 70), ("cancel", 10), ("churn", 8), ("stateless", 8), ("count", 4))


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    ops: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    streamed: int = 0

    def error(self, where: str, exc: BaseException) -> None:
        self.errors.append(f"{where}: {type(exc).__name__}: {exc}"[:300])


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, str(HERE / "server.py"), "--port", str(port)],
        stdout=subprocess.PIPE,
    )
    assert process.stdout is not None
    line = process.stdout.readline().decode()
    if not line.startswith("ready"):
        process.kill()
        raise RuntimeError(f"server did not start: {line!r}")
    return process, f"http://127.0.0.1:{port}/mcp"


async def echo(client: Client, stats: Stats, text: str) -> None:
    start = time.perf_counter()
    result = await client.call("echo", {"text": text}, options=RequestOptions(timeout=30))
    stats.latencies.append(time.perf_counter() - start)
    block = result.content[0]
    if getattr(block, "text", None) != text:
        raise AssertionError(f"echo answered {block!r}")


async def worker(n: int, url: str, deadline: float, think: float, stats: Stats) -> None:
    rng = random.Random(n)
    names, weights = zip(*MIX, strict=True)
    async with (
        connect_http(url) as transport,
        Client(transport, protocol_version=LATEST_HANDSHAKE) as client,
    ):
        done = 0
        while time.monotonic() < deadline:
            # Every kind once first (so even a short run covers the mix), then weighted.
            op = names[done] if done < len(names) else rng.choices(names, weights)[0]
            done += 1
            try:
                if op == "echo":
                    await echo(client, stats, f"c{n}")
                elif op == "count":
                    await client.call("count", {"n": 1000})
                elif op == "cancel":
                    with anyio.move_on_after(rng.uniform(0.005, 0.05)):
                        await client.call("slow", {"seconds": 5})
                elif op == "churn":
                    async with (
                        connect_http(url) as other,
                        Client(other, protocol_version=LATEST_HANDSHAKE) as fresh,
                    ):
                        await echo(fresh, stats, "fresh")
                else:
                    async with (
                        connect_http(url) as other,
                        Client(other, protocol_version=LATEST_STATELESS) as modern,
                    ):
                        await echo(modern, stats, "modern")
            except Exception as exc:
                stats.error(op, exc)
            stats.ops[op] = stats.ops.get(op, 0) + 1
            await anyio.sleep(think * rng.uniform(0.5, 1.5))


async def slow_reader(n: int, url: str, deadline: float, stats: Stats) -> None:
    """A stream read one chunk every second: a listen stream (odd n) or a GET stream."""
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=None)) as http:
        while time.monotonic() < deadline:
            try:
                if n % 2:
                    await _listen_slowly(http, url, deadline, stats)
                else:
                    await _get_slowly(http, url, deadline, stats)
            except Exception as exc:
                stats.error("slow reader", exc)
                await anyio.sleep(1)


async def _read_slowly(response: httpx2.Response, until: float, stats: Stats) -> None:
    async for _chunk in response.aiter_raw(256):
        stats.streamed += 1
        if time.monotonic() >= until:
            return
        await anyio.sleep(1.0)


async def _listen_slowly(http: httpx2.AsyncClient, url: str, deadline: float, stats: Stats) -> None:
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
    async with http.stream("POST", url, json=message, headers=headers) as response:
        if response.status_code != 200:
            text = (await response.aread())[:200]
            raise RuntimeError(f"listen answered HTTP {response.status_code}: {text!r}")
        await _read_slowly(response, min(deadline, time.monotonic() + 30), stats)


async def _get_slowly(http: httpx2.AsyncClient, url: str, deadline: float, stats: Stats) -> None:
    async with (
        connect_http(url) as transport,
        Client(transport, protocol_version=LATEST_HANDSHAKE) as client,
    ):
        session = getattr(transport, "session_id", None)
        headers = {
            "accept": "text/event-stream",
            "mcp-session-id": str(session),
            "mcp-protocol-version": client.protocol_version or LATEST_HANDSHAKE,
        }
        async with http.stream("GET", url, headers=headers) as response:
            if response.status_code not in (200, 409):
                raise RuntimeError(f"GET answered HTTP {response.status_code}")
            await _read_slowly(response, min(deadline, time.monotonic() + 30), stats)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def drive(url: str, pid: int, seconds: float, clients: int, think: float) -> dict[str, Any]:
    stats = Stats()
    warmup = min(60.0, max(5.0, seconds / 10))
    start = time.monotonic()
    deadline = start + seconds
    rss: dict[str, int] = {}

    async def sample_start() -> None:
        await anyio.sleep(warmup)
        stats.latencies.clear()  # latency after the warm-up only
        rss["start"] = rss_kib(pid)

    async with anyio.create_task_group() as tg:
        tg.start_soon(sample_start)
        for n in range(clients):
            tg.start_soon(worker, n, url, deadline, think, stats)
            if n % 5 == 4:
                tg.start_soon(slow_reader, n, url, deadline, stats)
    await anyio.sleep(2)  # let the server settle (closed sessions, reaped streams)
    rss["end"] = rss_kib(pid)
    drift = 100.0 * (rss["end"] - rss["start"]) / rss["start"]
    return {
        "seconds": seconds,
        "clients": clients,
        "rss_start_kib": rss["start"],
        "rss_end_kib": rss["end"],
        "rss_drift_pct": round(drift, 2),
        "errors": len(stats.errors),
        "first_errors": stats.errors[:5],
        "ops": stats.ops,
        "calls_measured": len(stats.latencies),
        "p50_ms": round(percentile(stats.latencies, 0.50) * 1000, 2),
        "p99_ms": round(percentile(stats.latencies, 0.99) * 1000, 2),
        "mean_ms": round(statistics.fmean(stats.latencies) * 1000, 2) if stats.latencies else None,
        "stream_chunks_read": stats.streamed,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1800)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument(
        "--think",
        type=float,
        default=1.0,
        help="seconds between a client's ops (about one a second: the clients, all in this one "
        "process, must not be what saturates a core)",
    )
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args()
    process, url = start_server()
    try:
        report = asyncio.run(drive(url, process.pid, args.seconds, args.clients, args.think))
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
    print(f"soak: {report['clients']} clients x {report['seconds']:.0f} s, one uvicorn worker")
    print(
        f"  RSS  start {report['rss_start_kib'] / 1024:.1f} MiB  end "
        f"{report['rss_end_kib'] / 1024:.1f} MiB  drift {report['rss_drift_pct']:+.2f} %"
    )
    print(f"  errors {report['errors']}" + "".join(f"\n    {e}" for e in report["first_errors"]))
    print(
        f"  echo latency p50 {report['p50_ms']} ms  p99 {report['p99_ms']} ms "
        f"({report['calls_measured']} calls after warm-up)"
    )
    print(f"  ops {report['ops']}  stream chunks read slowly {report['stream_chunks_read']}")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))
    return 0 if report["errors"] == 0 else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
