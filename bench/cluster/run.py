"""Cluster benchmark (issue 30, ``make bench-cluster``): one server on 1, 2 and 4 workers behind
haproxy in round-robin, mcpbind against the official Python SDK in the same run.

Every configuration runs behind the same haproxy (``balance roundrobin``, HTTP keep-alive on
both sides: each request goes to the next worker, so consecutive requests of one session land
on different workers) and is driven by the HTTP benchmark's load generator
(``bench/http/loadgen/loadgen.mjs``: Node + undici, one keep-alive connection per client,
``tools/call echo`` in a loop) at each client count:

- ``mcpbind (2026-07-28)``: N mcpbind workers, each on its own port, each a worker of a
  cluster on one redis-server (``RedisCluster``, as ``mcpbind serve --redis`` builds it);
  stateless requests, which never touch Redis.
- ``mcpbind sessions (Redis)``: the same workers, 2025-11-25 sessions: ``initialize`` claims the
  session in the registry; a request that lands on another worker than the owner is forwarded
  there (one Redis GET, one HTTP hop), so (N-1)/N of the requests are forwarded.
- ``mcpbind sessions (memory)``: one worker, no Redis: the baseline of the Redis hop's cost.
- ``official-py (2026-07-28)`` and ``official-py (sessionless)``: the official SDK's echo
  server in its documented multi-worker configuration (``stateless_http=True``,
  ``json_response=True``, ``uvicorn --workers N``: N processes on one socket, behind the same
  haproxy); the sessionless rows speak 2025-11-25 without a session (that mode has no
  server-to-client requests and no resumability: the feature mcpbind's session rows keep).

Every Python server runs uvicorn on uvloop + httptools. Per cell: requests/s, p50 and p99 from
the load generator; the CPU time per request of the workers (every process of the server,
summed), of haproxy and of redis-server over the timed window; Redis commands per request
(``INFO stats``). CPU per request barely moves with outside load where requests/s does: on a
shared 2-core machine the CPU figures are the ones to compare, and they give the scaling model
(docs/guides/deployment.md). Not a timed test; ``--quick`` is the smoke-sized run
(tests/bench/test_bench_cluster_smoke.py).

    python bench/cluster/run.py                        # 1, 2, 4 workers x 10, 50 clients
    python bench/cluster/run.py --workers 2 --clients 10 --json out.json
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LOADGEN = HERE.parent / "http" / "loadgen"
PY = sys.executable
TICK = os.sysconf("SC_CLK_TCK")

HANDSHAKE = "2025-11-25"
STATELESS = "2026-07-28"

MCPBIND_2026 = "mcpbind (2026-07-28)"
MCPBIND_REDIS = "mcpbind sessions (Redis)"
MCPBIND_MEMORY = "mcpbind sessions (memory)"
OFFICIAL_2026 = "official-py (2026-07-28)"
OFFICIAL_SESSIONLESS = "official-py (sessionless)"


@dataclass(frozen=True)
class Config:
    name: str
    server: str  # "mcpbind" | "official"
    protocol: str
    redis: bool = True
    sessionless: bool = False
    only_one_worker: bool = False


CONFIGS = (
    Config(MCPBIND_2026, "mcpbind", STATELESS),
    Config(MCPBIND_REDIS, "mcpbind", HANDSHAKE),
    Config(MCPBIND_MEMORY, "mcpbind", HANDSHAKE, redis=False, only_one_worker=True),
    Config(OFFICIAL_2026, "official", STATELESS, redis=False),
    Config(OFFICIAL_SESSIONLESS, "official", HANDSHAKE, redis=False, sessionless=True),
)


class BenchError(Exception):
    pass


# ---- processes -------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_listening(port: int, process: subprocess.Popen[Any], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise BenchError(f"{process.args!r} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise BenchError(f"nothing listens on 127.0.0.1:{port}") from None
            time.sleep(0.05)


def stop(process: subprocess.Popen[Any], grace: float = 10.0) -> None:
    """SIGTERM by PID, SIGKILL past ``grace``; reaped."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(grace)


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants (uvicorn ``--workers``: the supervisor and its workers)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += parents.get(current, [])
    return found


def cpu_seconds(pids: Sequence[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / TICK
    return total


@dataclass
class Stack:
    """What serves one configuration: its server processes, haproxy, and Redis if any."""

    url: str
    servers: list[subprocess.Popen[Any]]
    haproxy: subprocess.Popen[Any]
    redis: subprocess.Popen[Any] | None
    redis_port: int | None

    def server_pids(self) -> list[int]:
        return [pid for process in self.servers for pid in tree(process.pid)]

    def worker_pids(self) -> list[int]:
        """The processes that serve requests: each mcpbind worker, or uvicorn's workers (the
        supervisor's children)."""
        if len(self.servers) > 1:
            return [process.pid for process in self.servers]
        children = tree(self.servers[0].pid)[1:]
        return children or [self.servers[0].pid]

    def redis_commands(self) -> tuple[int, int]:
        """Commands Redis has processed: in all, and ``GET`` (a forwarded request's lookup)."""
        if self.redis_port is None:
            return 0, 0
        with socket.create_connection(("127.0.0.1", self.redis_port), timeout=2) as conn:
            conn.sendall(b"INFO everything\r\n")
            size, data = 0, b""
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
                if not size and b"\r\n" in data:  # "$<length>" first
                    size = int(data[1 : data.index(b"\r\n")])
                if size and len(data) >= data.index(b"\r\n") + 2 + size:
                    break
        total = gets = -1
        for line in data.decode().splitlines():
            if line.startswith("total_commands_processed:"):
                total = int(line.split(":")[1])
            elif line.startswith("cmdstat_get:"):
                gets = int(line.split("calls=")[1].split(",")[0])
        if total < 0:
            raise BenchError("redis INFO has no total_commands_processed")
        return total, max(gets, 0)


_HAPROXY = """\
global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    option forwardfor
frontend mcp
    bind 127.0.0.1:{port}
    default_backend workers
backend workers
    balance roundrobin
{servers}
"""


def start_redis(work: Path) -> tuple[subprocess.Popen[Any], int]:
    exe = shutil.which("redis-server")
    if exe is None:
        raise BenchError("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    args = [exe, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--dir", str(work)]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    wait_listening(port, process)
    return process, port


def start_haproxy(ports: Sequence[int], work: Path) -> tuple[subprocess.Popen[Any], str]:
    exe = shutil.which("haproxy")
    if exe is None:
        raise BenchError("haproxy is not installed (apt-get install haproxy)")
    port = free_port()
    servers = "\n".join(f"    server w{i} 127.0.0.1:{p}" for i, p in enumerate(ports))
    config = work / "haproxy.cfg"
    config.write_text(_HAPROXY.format(port=port, servers=servers))
    process = subprocess.Popen(
        [exe, "-db", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_listening(port, process)
    return process, f"http://127.0.0.1:{port}/mcp"


def start_mcpbind(count: int, redis_url: str | None, env: dict[str, str]) -> list[Any]:
    started: list[tuple[subprocess.Popen[Any], int]] = []
    for _ in range(count):
        port = free_port()
        cmd = [PY, str(HERE / "worker.py"), "--port", str(port), "--loop", "uvloop"]
        cmd += ["--http", "httptools", *(["--redis", redis_url] if redis_url else [])]
        process = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env)
        started.append((process, port))
    for process, port in started:
        assert process.stdout is not None
        line = process.stdout.readline().decode()
        if not line.startswith("ready"):
            raise BenchError(f"an mcpbind worker did not start: {line!r}")
        wait_listening(port, process)
    return started


def start_official(count: int, env: dict[str, str], work: Path) -> list[Any]:
    port = free_port()
    cmd = [PY, "-m", "uvicorn", "official_app:app", "--app-dir", str(HERE), "--host", "127.0.0.1"]
    cmd += ["--port", str(port), "--workers", str(count), "--loop", "uvloop"]
    cmd += ["--http", "httptools", "--no-access-log", "--log-level", "warning"]
    cmd += ["--timeout-keep-alive", "60"]
    with (work / "official.log").open("wb") as log:  # the SDK logs every session at INFO
        process = subprocess.Popen(cmd, env=env, stderr=log)
    wait_listening(port, process)
    return [(process, port)]


@contextlib.contextmanager
def stack(config: Config, workers: int, work: Path) -> Iterator[Stack]:
    processes: list[subprocess.Popen[Any]] = []
    try:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        # One request-state key ring for every worker (what a deployment sets).
        env["MCPBIND_STATE_KEYS"] = base64.b64encode(secrets.token_bytes(32)).decode()
        redis, redis_port, redis_url = None, None, None
        if config.redis:
            redis, redis_port = start_redis(work)
            processes.append(redis)
            redis_url = f"redis://127.0.0.1:{redis_port}/0"
        if config.server == "mcpbind":
            started = start_mcpbind(workers, redis_url, env)
        else:
            started = start_official(workers, env, work)
        servers = [process for process, _ in started]
        processes += servers
        proxy, url = start_haproxy([port for _, port in started], work)
        processes.append(proxy)
        yield Stack(url, servers, proxy, redis, redis_port)
    finally:
        for process in reversed(processes):
            stop(process)
        for process in processes:
            if process.stdout is not None:
                process.stdout.close()


# ---- one cell ----------------------------------------------------------------------------


@dataclass
class Cell:
    config: str
    workers: int
    clients: int
    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    errors: int
    server_us: float  # CPU of every server process per request, microseconds
    haproxy_us: float
    redis_us: float
    redis_ops: float  # Redis commands per request
    forwarded: float  # share of requests forwarded to another worker (Redis GETs per request)
    server_pct: float  # the servers' CPU over the window, % of one core
    busiest: float  # the busiest worker's share of the workers' CPU, % (100 / N: even)
    loadgen_pct: float


def loadgen(
    node: str, url: str, config: Config, clients: int, warmup: float, duration: float
) -> list[str]:
    cmd = [node, str(LOADGEN / "loadgen.mjs"), "--url", url, "--clients", str(clients)]
    cmd += ["--warmup", str(warmup), "--duration", str(duration)]
    cmd += ["--protocol-version", config.protocol]
    return cmd + (["--sessionless"] if config.sessionless else [])


def run_cell(
    node: str, running: Stack, config: Config, workers: int, clients: int, args: Any
) -> Cell:
    cmd = loadgen(node, running.url, config, clients, args.warmup, args.duration)
    gen = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(args.warmup + args.duration + 90, stop, (gen,))
    watchdog.start()
    marks: list[tuple[float, float, float, float, tuple[int, int]]] = []
    shares: list[list[float]] = []  # each worker's CPU seconds, at each mark
    result: dict[str, Any] | None = None
    try:
        assert gen.stdout is not None
        for line in gen.stdout:
            if line.startswith("# "):
                redis = [running.redis.pid] if running.redis is not None else []
                shares.append([cpu_seconds([pid]) for pid in running.worker_pids()])
                marks.append(
                    (
                        time.perf_counter(),
                        cpu_seconds(running.server_pids()),
                        cpu_seconds([running.haproxy.pid]),
                        cpu_seconds(redis),
                        running.redis_commands(),
                    )
                )
            elif line.strip():
                result = json.loads(line)
        gen.wait(30)
    finally:
        watchdog.cancel()
        stop(gen)
    err = gen.stderr.read() if gen.stderr is not None else ""
    for pipe in (gen.stdout, gen.stderr):
        if pipe is not None:
            pipe.close()
    if gen.returncode != 0 or result is None or len(marks) < 2:
        raise BenchError(
            f"{config.name}, {workers} workers, {clients} clients: the load generator failed "
            f"(exit {gen.returncode}): {err.strip()[-1000:]}"
        )
    (w0, s0, h0, r0, o0), (w1, s1, h1, r1, o1) = marks[0], marks[-1]
    used = [b - a for a, b in zip(shares[0], shares[-1], strict=False)]
    requests = max(int(result["requests"]), 1)
    return Cell(
        config=config.name,
        workers=workers,
        clients=clients,
        rps=float(result["rps"]),
        p50_ms=float(result["p50_ms"]),
        p99_ms=float(result["p99_ms"]),
        requests=int(result["requests"]),
        errors=int(result.get("errors", 0)),
        server_us=(s1 - s0) / requests * 1e6,
        haproxy_us=(h1 - h0) / requests * 1e6,
        redis_us=(r1 - r0) / requests * 1e6,
        # One INFO call of our own falls inside the window.
        redis_ops=max(0, o1[0] - o0[0] - 1) / requests,
        forwarded=(o1[1] - o0[1]) / requests,
        server_pct=(s1 - s0) / max(w1 - w0, 1e-9) * 100,
        busiest=max(used) / max(sum(used), 1e-9) * 100 if used else 0.0,
        loadgen_pct=float(result.get("cpu_pct", 0.0)),
    )


# ---- the run -----------------------------------------------------------------------------


def node_binary() -> str:
    bundled = LOADGEN / "node_modules" / ".bin" / "node"
    found = str(bundled) if bundled.exists() else shutil.which("node")
    if found is None or not (LOADGEN / "node_modules" / "undici").is_dir():
        raise BenchError("load generator not installed: run `npm ci --prefix bench/http/loadgen`")
    return found


def benchmark(args: argparse.Namespace) -> dict[str, Any]:
    node = node_binary()
    cells: list[Cell] = []
    load_before = os.getloadavg()
    configs = [c for c in CONFIGS if args.only is None or c.name in args.only]
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp:
        for workers in args.workers:
            for config in configs:
                if config.only_one_worker and workers != 1:
                    continue
                work = Path(tmp) / f"{len(cells)}"
                work.mkdir()
                print(f"# {config.name}, {workers} worker(s)", file=sys.stderr, flush=True)
                with stack(config, workers, work) as running:
                    if args.prime > 0:  # untimed: imports, first sessions, caches
                        cmd = loadgen(node, running.url, config, 10, 0, args.prime)
                        subprocess.run(cmd, capture_output=True, check=False, timeout=120)
                    for clients in args.clients:
                        best: Cell | None = None
                        for _ in range(args.best_of):
                            cell = run_cell(node, running, config, workers, clients, args)
                            if best is None or cell.rps > best.rps:
                                best = cell
                        assert best is not None
                        cells.append(best)
    return {
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "cpus": os.cpu_count(),
        "duration_s": args.duration,
        "best_of": args.best_of,
        "cells": [asdict(c) for c in cells],
    }


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return " | ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join([line(headers), "-+-".join("-" * w for w in widths), *map(line, rows)])


def _find(
    cells: list[dict[str, Any]], config: str, workers: int, clients: int
) -> dict[str, Any] | None:
    return next(
        (
            c
            for c in cells
            if (c["config"], c["workers"], c["clients"]) == (config, workers, clients)
        ),
        None,
    )


def report(data: dict[str, Any]) -> str:
    cells = data["cells"]
    out = [
        f"cluster benchmark: haproxy round-robin, {data['cpus']} CPUs, "
        f"{data['duration_s']:g} s per cell (best of {data['best_of']}), load average "
        f"{data['load_before'][0]:.2f} before, {data['load_after'][0]:.2f} after",
        "",
    ]
    headers = [
        "configuration",
        "workers",
        "clients",
        "req/s",
        "p50 ms",
        "p99 ms",
        "servers us/req",
        "haproxy us/req",
        "redis us/req",
        "redis ops/req",
        "forwarded",
        "servers %",
        "busiest %",
    ]
    rows = [
        [
            c["config"],
            str(c["workers"]),
            str(c["clients"]),
            f"{c['rps']:.0f}",
            f"{c['p50_ms']:.2f}",
            f"{c['p99_ms']:.2f}",
            f"{c['server_us']:.0f}",
            f"{c['haproxy_us']:.0f}",
            f"{c['redis_us']:.0f}",
            f"{c['redis_ops']:.2f}",
            f"{c['forwarded']:.2f}",
            f"{c['server_pct']:.0f}",
            f"{c['busiest']:.0f}",
        ]
        for c in cells
    ]
    out += [_table(headers, rows), ""]
    out.append(
        "mcpbind / official-py, same workers and clients (req/s ratio; CPU/req ratio, "
        "lower is cheaper):"
    )
    ratio_rows = []
    for mine, theirs in ((MCPBIND_2026, OFFICIAL_2026), (MCPBIND_REDIS, OFFICIAL_SESSIONLESS)):
        for c in cells:
            if c["config"] != mine:
                continue
            other = _find(cells, theirs, c["workers"], c["clients"])
            if other is None or other["rps"] <= 0 or other["server_us"] <= 0:
                continue
            ratio_rows.append(
                [
                    f"{mine} / {theirs}",
                    str(c["workers"]),
                    str(c["clients"]),
                    f"{c['rps'] / other['rps']:.2f}x",
                    f"{c['server_us'] / other['server_us']:.2f}",
                ]
            )
    if ratio_rows:
        out += [_table(["comparison", "workers", "clients", "req/s", "CPU/req"], ratio_rows), ""]
    hop_rows = []
    for c in cells:
        base = _find(cells, MCPBIND_MEMORY, 1, c["clients"])
        if c["config"] != MCPBIND_REDIS or base is None or c["forwarded"] < 0.05:
            continue
        forwarded = c["forwarded"]
        extra = (c["server_us"] - base["server_us"]) / forwarded
        redis = c["redis_us"] / forwarded
        ops = c["redis_ops"] / forwarded
        hop_rows.append(
            [
                str(c["workers"]),
                str(c["clients"]),
                f"{forwarded:.2f}",
                f"{extra:.0f}",
                f"{redis:.0f}",
                f"{ops:.2f}",
                f"{base['server_us']:.0f}",
            ]
        )
    if hop_rows:
        out.append(
            "The Redis hop: a forwarded request's extra cost, against one worker in memory "
            "(sessions (memory), same clients):"
        )
        out.append(
            _table(
                [
                    "workers",
                    "clients",
                    "forwarded",
                    "extra servers us",
                    "redis us",
                    "redis ops",
                    "memory us/req",
                ],
                hop_rows,
            )
        )
        out.append("")
    out.append(
        "servers us/req: CPU time (user+system) of every server process over the timed window "
        "per request (uvicorn --workers: the supervisor and its workers); haproxy and redis "
        "the same for them; redis ops/req: Redis commands per request (INFO); forwarded: the "
        "share of requests that landed on another worker than their session's owner and "
        "were forwarded to it (Redis GETs per request; about (N-1)/N under round-robin). The "
        "hop's extra cost is per forwarded request: (servers us/req - memory us/req) / "
        "forwarded. servers %: their CPU over the window (100 = one core); busiest %: the "
        "busiest worker's share of the workers' CPU (100/N when the load is even)."
    )
    return "\n".join(out)


def _numbers(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("takes positive integers, e.g. 1,2,4") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("takes positive integers, e.g. 1,2,4")
    return values


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=_numbers, default=[1, 2, 4], help="worker counts (1,2,4)")
    parser.add_argument("--clients", type=_numbers, default=[10, 50], help="client counts (10,50)")
    parser.add_argument("--duration", type=float, default=3.0, help="timed seconds per cell")
    parser.add_argument("--warmup", type=float, default=1.0, help="untimed seconds first")
    parser.add_argument("--prime", type=float, default=2.0, help="untimed seconds per new stack")
    parser.add_argument("--best-of", type=int, default=1, help="runs per cell, best kept")
    parser.add_argument(
        "--only",
        type=lambda s: [p.strip() for p in s.split(",")],
        help="configurations by name (comma-separated); see the docstring",
    )
    parser.add_argument("--quick", action="store_true", help="smoke-sized: short cells")
    parser.add_argument("--json", type=Path, help="also write every cell here")
    args = parser.parse_args(argv)
    if args.quick:
        args.duration, args.warmup, args.prime = 0.5, 0.2, 0.0
    known = {c.name for c in CONFIGS}
    if args.only is not None and not set(args.only) <= known:
        parser.error(f"--only: unknown {sorted(set(args.only) - known)}; known: {sorted(known)}")
    if args.best_of < 1 or args.duration <= 0 or args.warmup < 0:
        parser.error("--best-of >= 1, --duration > 0, --warmup >= 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # the finally blocks stop all
    try:
        data = benchmark(args)
    except BenchError as exc:
        print(f"bench-cluster: {exc}", file=sys.stderr)
        return 1
    print(report(data))
    if args.json is not None:
        args.json.write_text(json.dumps(data, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
