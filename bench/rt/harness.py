"""Shared measurement code for the Python round-trip benchmark clients.

Every bench client (official Python SDK, raw floor, and later mcpbind) has the same
command line and prints exactly one JSON line on stdout, so ``run.py`` can drive any
implementation, including the Node one in ``peers/ts/bench_client.mjs``, the same way::

    <client> --transport stdio|memory [--seq N] [--conc M] [--inflight K]
             [--warmup W] [--text T] [-- SERVER_CMD...]

Output (one line)::

    {"impl": "...", "transport": "stdio", "detail": "...",
     "sequential": {"calls": N, "inflight": 1, "seconds": s, "calls_per_s": r,
                    "p50_ms": x, "p99_ms": y},
     "concurrent": {"calls": M, "inflight": 32, ...}}

A client supplies a *connector*: an async context manager factory that connects
(spawning ``SERVER_CMD`` for stdio, or linking an in-process server for memory),
performs the MCP handshake, and yields an ``echo(text) -> str`` coroutine function
that does one ``tools/call echo`` round trip and returns the echoed text.

Timing: ``time.perf_counter_ns`` around each call. Sequential mode awaits each call
before the next; concurrent mode runs ``inflight`` workers that each loop "call,
await, call again" off a shared counter, so exactly ``inflight`` requests are
outstanding until the tail. Percentiles are nearest-rank over every measured call.
Warm-up calls (``--warmup`` sequential, then ``--warmup`` concurrent) are not timed.

CPU per call (Linux, Python clients): ``client_cpu_us`` is this process's user + system CPU
time over the mode divided by its calls (``getrusage``), ``server_cpu_us`` that of the child
processes (the stdio server; ``/proc``, 10 ms ticks). Outside load moves them far less than
calls/s, and they show which side limits a configuration with 32 in flight.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, TypedDict

import anyio

EchoFn = Callable[[str], Awaitable[str]]
Connector = Callable[[list[str]], AbstractAsyncContextManager[EchoFn]]
"""``connector(server_cmd)`` -> async CM yielding ``echo``; ``server_cmd`` is ``[]`` for memory."""

DEFAULT_TEXT = "hello from the mcpbind round-trip benchmark"


class ModeResult(TypedDict, total=False):
    calls: int
    inflight: int
    seconds: float
    calls_per_s: float
    p50_ms: float
    p99_ms: float
    client_cpu_us: float
    server_cpu_us: float


def cpu_seconds() -> tuple[float, float]:
    """CPU seconds (user + system) used so far by this process and by its running children
    (``nan`` for the children where ``/proc`` cannot tell)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    children = 0.0
    try:
        tick = os.sysconf("SC_CLK_TCK")
        for task in Path(f"/proc/{os.getpid()}/task").iterdir():
            for pid in (task / "children").read_text().split():
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                children += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    except (OSError, ValueError, IndexError):
        children = math.nan
    return usage.ru_utime + usage.ru_stime, children


def with_cpu(result: ModeResult, before: tuple[float, float]) -> ModeResult:
    """``result`` with the CPU per call spent since ``before`` (see the module docstring)."""
    after = cpu_seconds()
    calls = result["calls"]
    for key, start, end in zip(("client_cpu_us", "server_cpu_us"), before, after, strict=True):
        if not math.isnan(end - start):
            result[key] = round((end - start) / calls * 1e6, 2)  # type: ignore[literal-required]
    return result


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted, non-empty sequence (q in 0..100)."""
    rank = max(1, math.ceil(q / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


def summarize(latencies_ns: list[int], seconds: float, inflight: int) -> ModeResult:
    ordered = sorted(latencies_ns)
    return ModeResult(
        calls=len(ordered),
        inflight=inflight,
        seconds=round(seconds, 6),
        calls_per_s=round(len(ordered) / seconds, 1),
        p50_ms=round(percentile(ordered, 50) / 1e6, 4),
        p99_ms=round(percentile(ordered, 99) / 1e6, 4),
    )


async def run_sequential(echo: EchoFn, calls: int, text: str) -> ModeResult:
    latencies: list[int] = []
    append = latencies.append
    clock = time.perf_counter_ns
    start = clock()
    for _ in range(calls):
        t0 = clock()
        got = await echo(text)
        append(clock() - t0)
        if got != text:
            raise AssertionError(f"echo mismatch: sent {text!r}, got {got!r}")
    return summarize(latencies, (clock() - start) / 1e9, 1)


async def run_concurrent(echo: EchoFn, calls: int, inflight: int, text: str) -> ModeResult:
    latencies: list[int] = []
    append = latencies.append
    clock = time.perf_counter_ns
    remaining = calls

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            t0 = clock()
            got = await echo(text)
            append(clock() - t0)
            if got != text:
                raise AssertionError(f"echo mismatch: sent {text!r}, got {got!r}")

    start = clock()
    async with anyio.create_task_group() as tg:
        for _ in range(min(inflight, calls)):
            tg.start_soon(worker)
    return summarize(latencies, (clock() - start) / 1e9, inflight)


def build_parser(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--transport", choices=("stdio", "memory"), default="stdio")
    parser.add_argument("--seq", type=int, default=2000, help="sequential calls (timed)")
    parser.add_argument("--conc", type=int, default=10000, help="concurrent calls (timed)")
    parser.add_argument("--inflight", type=int, default=32, help="outstanding calls (concurrent)")
    parser.add_argument("--warmup", type=int, default=500, help="untimed calls before each mode")
    parser.add_argument("--text", default=DEFAULT_TEXT, help="text sent to the echo tool")
    parser.add_argument("server_cmd", nargs="*", help="stdio server command (after --)")
    return parser


async def measure(
    connector: Connector, args: argparse.Namespace, server_cmd: list[str]
) -> dict[str, ModeResult]:
    async with connector(server_cmd) as echo:
        if args.warmup:
            await run_sequential(echo, args.warmup, args.text)
            await run_concurrent(echo, args.warmup, args.inflight, args.text)
        before = cpu_seconds()
        seq = with_cpu(await run_sequential(echo, args.seq, args.text), before)
        before = cpu_seconds()
        conc = with_cpu(await run_concurrent(echo, args.conc, args.inflight, args.text), before)
    return {"sequential": seq, "concurrent": conc}


def main(
    impl: str,
    make_connectors: Callable[[argparse.Namespace], dict[str, Connector]],
    *,
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None,
    describe: Callable[[argparse.Namespace], str] | None = None,
    argv: Sequence[str] | None = None,
    backend_options: dict[str, Any] | None = None,
    server_cmd_optional: bool = False,
) -> None:
    """Parse the common CLI, run both modes with the chosen connector, print one JSON line.

    ``add_arguments`` adds client-specific options; ``make_connectors(args)`` maps each
    supported transport name to its connector; ``describe(args)`` fills the ``detail`` field.
    ``server_cmd_optional`` lets a stdio connector supply its own default server command.
    """
    parser = build_parser(f"{impl} round-trip bench client")
    if add_arguments is not None:
        add_arguments(parser)
    args = parser.parse_args(argv)
    connectors = make_connectors(args)
    if args.transport not in connectors:
        sys.exit(f"{impl}: transport {args.transport!r} not supported")
    server_cmd: list[str] = list(args.server_cmd)
    if args.transport == "stdio" and not server_cmd and not server_cmd_optional:
        sys.exit(f"{impl}: stdio transport needs a server command after --")
    connector = connectors[args.transport]

    async def _run() -> dict[str, ModeResult]:
        return await measure(connector, args, server_cmd)

    results = anyio.run(_run, backend_options=backend_options)
    detail = describe(args) if describe is not None else ""
    line = {"impl": impl, "transport": args.transport, "detail": detail, **results}
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()
