"""Soak benchmark (issue 16): one uvicorn worker serving ``server.py`` under a steady mix of
work for a long time; prints RSS drift, errors, echo latency percentiles and the CPU of every
process.

    python bench/soak/run.py [--seconds 1800] [--clients 50] [--procs N] [--json out.json]
    python bench/soak/run.py --workers 4 --seconds 600    # make soak-cluster

``--workers N`` soaks a cluster instead (issue 30): a redis-server, N workers on it (each
``server.py --redis``: session registry, event store and notification bus; only the first
announces changes, which reach every worker's clients on the bus) and haproxy round-robin in
front, so consecutive requests of a session land on different workers and are forwarded to
its owner. The report adds each worker's RSS drift and Redis's ``used_memory`` drift; CPU is
given for haproxy and Redis too.

The clients (``clients.py``: calls, cancels, sessions created and deleted, 2026-07-28 calls,
listen and GET streams, slow readers) are spread over ``--procs`` client processes (default:
one per core), so no single client process saturates and the latencies measure the server.
Latencies are the raw samples of every process merged, taken after the warm-up (a tenth of the
run, 5 to 60 s). RSS drift: the server's RSS at the end of the run (under the same load)
against its RSS at the end of the warm-up; the RSS after every client closed, and the peak,
are printed too. CPU: each process's share of one core between the end of the warm-up and the
end of the run; a client process near 100 % means the harness, not the server, set the pace.

The server runs the stack ``serve_http`` picks by default (uvloop + httptools when installed,
with its request-header deadline): what a ``serve_http`` user runs. ``--stack h11`` runs plain
uvicorn on asyncio + h11 instead; there every closed connection is left as cyclic garbage
(uvicorn's protocol and its request cycle refer to each other, and on Python 3.11 an asyncio
transport refers to itself), freed only by the collector's full collections, which come less
often the fewer objects the server allocates per request: there the RSS follows the
collector's timing more than the server's own state.

Whatever happens, the run ends: a client process still running ``--grace`` seconds after the
end reports its hung tasks (await chains on its stderr, printed here) and cancels them; one
still alive ``--kill-after`` seconds later is asked for its thread stacks (SIGUSR1) and killed, and so is a server that does not stop on
SIGTERM. Every process is started and stopped here by its PID. The report is always printed;
the exit status is 0 with no error and nothing hung, 1 with errors, 2 if anything hung (the
targets are printed beside the figures, not enforced). Not a timed test: ``make soak``;
``tests/bench/test_bench_soak_smoke.py`` runs it briefly.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Proc:
    name: str
    process: subprocess.Popen[bytes]
    out: Path | None = None
    log: Path | None = None
    cpu: list[float] = field(default_factory=list)  # CPU seconds at each sample
    killed: bool = False

    @property
    def pid(self) -> int:
        return self.process.pid


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def rss_kib(pid: int) -> int:
    """The process's resident set in KiB (0 once it has exited)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in lines if line.startswith("VmRSS:")), 0)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(
    args: argparse.Namespace, work: Path, name: str = "server", *extra: str
) -> tuple[Proc, int]:
    port = free_port()
    command = [sys.executable, str(HERE / "server.py"), "--port", str(port)]
    command += ["--tick", str(args.tick), "--list-changed", str(args.list_changed)]
    command += ["--http", args.stack, *extra]
    log = work / f"{name.replace(' ', '')}.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr)
    server = Proc(name, process, log=log)
    assert process.stdout is not None
    line = process.stdout.readline().decode()
    if not line.startswith("ready"):
        stop(server)
        raise RuntimeError(f"{name} did not start: {line!r}")
    return server, port


_HAPROXY = """\
global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    timeout tunnel 1h
    option forwardfor
frontend mcp
    bind 127.0.0.1:{port}
    default_backend workers
backend workers
    balance roundrobin
{servers}
"""


@dataclass
class Cluster:
    """``--workers N``: redis-server, the workers and haproxy (round-robin) in front."""

    redis: Proc
    redis_port: int
    haproxy: Proc

    def memory(self) -> tuple[int, int]:
        """Redis ``used_memory`` in bytes and its number of keys ((0, 0) once it is gone)."""
        try:
            with socket.create_connection(("127.0.0.1", self.redis_port), timeout=2) as conn:
                conn.sendall(b"INFO everything\r\n")
                data = b""
                while b"# Keyspace" not in data or not data.endswith(b"\r\n"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
        except OSError:
            return 0, 0
        used = keys = 0
        for line in data.decode().splitlines():
            if line.startswith("used_memory:"):
                used = int(line.split(":")[1])
            elif line.startswith("db0:keys="):
                keys = int(line.split("=")[1].split(",")[0])
        return used, keys


def start_cluster(args: argparse.Namespace, work: Path) -> tuple[list[Proc], Cluster, str]:
    """redis-server, ``args.workers`` workers on it (only the first announces changes; the
    bus takes them to the others' clients) and haproxy round-robin over them."""
    exe = {name: shutil.which(name) for name in ("redis-server", "haproxy")}
    missing = [name for name, path in exe.items() if path is None]
    if missing:
        raise RuntimeError(f"--workers needs {' and '.join(missing)} (apt-get install ...)")
    redis_port = free_port()
    command = [str(exe["redis-server"]), "--bind", "127.0.0.1", "--port", str(redis_port)]
    command += ["--save", "", "--dir", str(work)]
    redis = Proc("redis", subprocess.Popen(command, stdout=subprocess.DEVNULL))
    wait_listening(redis_port, redis)
    url = f"redis://127.0.0.1:{redis_port}/0"
    servers: list[Proc] = []
    ports: list[int] = []
    try:
        for i in range(args.workers):
            quiet = ["--no-churn"] if i else []
            server, port = start_server(args, work, f"worker {i}", "--redis", url, *quiet)
            servers.append(server)
            ports.append(port)
        port = free_port()
        lines = "\n".join(f"    server w{i} 127.0.0.1:{p}" for i, p in enumerate(ports))
        config = work / "haproxy.cfg"
        config.write_text(_HAPROXY.format(port=port, servers=lines))
        command = [str(exe["haproxy"]), "-db", "-f", str(config)]
        proxy = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        haproxy = Proc("haproxy", proxy)
        wait_listening(port, haproxy)
    except BaseException:
        for proc in (*servers, redis):
            stop(proc)
        raise
    return servers, Cluster(redis, redis_port, haproxy), f"http://127.0.0.1:{port}/mcp"


def wait_listening(port: int, proc: Proc, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.process.poll() is not None:
            raise RuntimeError(f"{proc.name} exited with {proc.process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{proc.name}: nothing listens on {port}") from None
            time.sleep(0.05)


def start_clients(args: argparse.Namespace, url: str, start: float, work: Path) -> list[Proc]:
    procs = max(1, min(args.procs, args.clients))
    clients = []
    first = 0
    for i in range(procs):
        count = args.clients // procs + (1 if i < args.clients % procs else 0)
        out, log = work / f"clients{i}.json", work / f"clients{i}.log"
        command = [sys.executable, str(HERE / "clients.py"), "--url", url]
        command += ["--first", str(first), "--count", str(count), "--start", repr(start)]
        command += ["--seconds", str(args.seconds), "--warmup", str(args.warmup)]
        command += ["--think", str(args.think), "--grace", str(args.grace), "--out", str(out)]
        command += ["--hang"] if args.inject_hang and i == 0 else []
        with log.open("wb") as stderr:
            process = subprocess.Popen(command, stdout=stderr, stderr=stderr)
        clients.append(Proc(f"clients {first}-{first + count - 1}", process, out, log))
        first += count
    return clients


def stop(proc: Proc, grace: float = 10.0) -> None:
    """SIGTERM, then (with its thread stacks asked for first) SIGKILL: by PID, always."""
    if proc.process.poll() is not None:
        return
    proc.process.send_signal(signal.SIGTERM)
    try:
        proc.process.wait(grace)
    except subprocess.TimeoutExpired:
        kill(proc)


def kill(proc: Proc) -> None:
    if proc.process.poll() is not None:
        return
    proc.killed = True
    proc.process.send_signal(signal.SIGUSR1)  # faulthandler: thread stacks to its log
    time.sleep(1.0)
    proc.process.kill()
    proc.process.wait()


def sample_cpu(procs: list[Proc]) -> None:
    for proc in procs:
        try:
            proc.cpu.append(cpu_seconds(proc.pid))
        except (OSError, IndexError):
            proc.cpu.append(float("nan"))


def sleep_until(instant: float, servers: list[Proc], peaks: dict[str, int]) -> None:
    """Sleep until ``instant``, sampling each server's RSS every 5 s (for its peak)."""
    while (left := instant - time.monotonic()) > 0:
        time.sleep(min(left, 5.0))
        for server in servers:
            if server.process.poll() is None:
                peaks[server.name] = max(peaks.get(server.name, 0), rss_kib(server.pid))


def rss_all(servers: list[Proc]) -> dict[str, int]:
    return {server.name: rss_kib(server.pid) for server in servers}


def percentile(ordered: list[float], q: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def soak(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    cluster: Cluster | None = None
    if args.workers:
        servers, cluster, url = start_cluster(args, work)
    else:
        server, port = start_server(args, work)
        servers, url = [server], f"http://127.0.0.1:{port}/mcp"
    clients: list[Proc] = []
    problems: list[str] = []
    rss: dict[str, dict[str, int]] = {"warm": {}, "end": {}, "closed": {}}
    redis_memory = {"warm": (0, 0), "end": (0, 0), "closed": (0, 0)}
    peaks: dict[str, int] = {}
    window = float("nan")
    helpers = [cluster.haproxy, cluster.redis] if cluster is not None else []
    try:
        start = time.monotonic() + 2.0  # every client process has imported by then
        clients = start_clients(args, url, start, work)
        everyone = [*servers, *helpers, *clients]
        sleep_until(start + args.warmup, servers, peaks)
        rss["warm"] = rss_all(servers)
        redis_memory["warm"] = cluster.memory() if cluster is not None else (0, 0)
        sample_cpu(everyone)
        measured_from = time.monotonic()
        sleep_until(start + args.seconds, servers, peaks)
        rss["end"] = rss_all(servers)
        redis_memory["end"] = cluster.memory() if cluster is not None else (0, 0)
        sample_cpu(everyone)
        window = time.monotonic() - measured_from
        hard = start + args.seconds + args.grace + args.kill_after
        for proc in clients:
            try:
                proc.process.wait(max(0.1, hard - time.monotonic()))
            except subprocess.TimeoutExpired:
                kill(proc)
                problems.append(f"{proc.name} (pid {proc.pid}) did not exit: killed")
        time.sleep(2.0)  # the server reaps closed sessions and streams
        rss["closed"] = rss_all(servers)
        redis_memory["closed"] = cluster.memory() if cluster is not None else (0, 0)
        for server in servers:
            peaks[server.name] = max(peaks.get(server.name, 0), rss["closed"][server.name])
            if server.process.poll() is not None:
                problems.append(
                    f"{server.name} exited during the run (status {server.process.returncode})"
                )
    finally:
        for proc in clients:
            kill(proc)
        for proc in (*helpers[:1], *servers, *helpers[1:]):  # haproxy, workers, Redis
            stop(proc)
    for server in servers:
        if server.killed:
            problems.append(f"{server.name} (pid {server.pid}) did not stop on SIGTERM: killed")
    report = merge(args, servers, helpers, clients, rss, peaks, window, problems)
    if cluster is not None:
        report["redis_memory"] = {when: used for when, (used, _) in redis_memory.items()}
        report["redis_keys"] = {when: keys for when, (_, keys) in redis_memory.items()}
        report["redis_drift_pct"] = drift(redis_memory["warm"][0], redis_memory["end"][0])
    return report


def merge(
    args: argparse.Namespace,
    servers: list[Proc],
    helpers: list[Proc],
    clients: list[Proc],
    rss: dict[str, dict[str, int]],
    peaks: dict[str, int],
    window: float,
    problems: list[str],
) -> dict[str, Any]:
    latencies: list[float] = []
    ops: dict[str, int] = {}
    errors = 0
    first_errors: list[str] = []
    kinds: dict[str, list[Any]] = {}  # kind -> [how many, the first one's message]
    streamed = notifications = 0
    for proc in clients:
        if proc.out is None or not proc.out.exists():
            problems.append(f"{proc.name} wrote no result (exit status {proc.process.returncode})")
            continue
        part = json.loads(proc.out.read_text())
        latencies += part["latencies"]
        for op, n in part["ops"].items():
            ops[op] = ops.get(op, 0) + n
        errors += part["errors"]
        first_errors += part["first_errors"]
        for kind, (n, first) in part.get("kinds", {}).items():
            kinds.setdefault(kind, [0, first])[0] += n
        streamed += part["streamed"]
        notifications += part["notifications"]
        problems += [f"{proc.name}: hung task {task}" for task in part["hung"]]
        if proc.process.returncode not in (0, None) and not proc.killed:
            problems.append(f"{proc.name} exited with status {proc.process.returncode}")
    # The server logs a traceback for anything that went wrong on its side (its change
    # ticker included): each is an error of the run.
    server_errors = 0
    for server in servers:
        assert server.log is not None
        for kind, first in server_tracebacks(server.name, server.log.read_text(errors="replace")):
            server_errors += 1
            kinds.setdefault(kind, [0, first])[0] += 1
    latencies.sort()
    cpu = {
        proc.name: round(100 * (proc.cpu[1] - proc.cpu[0]) / window, 1)
        for proc in (*servers, *helpers, *clients)
        if len(proc.cpu) == 2
    }
    total = {when: sum(by_server.values()) for when, by_server in rss.items()}
    per_worker = {
        server.name: {
            "rss_warm_kib": rss["warm"][server.name],
            "rss_end_kib": rss["end"][server.name],
            "rss_peak_kib": peaks.get(server.name, 0),
            "rss_drift_pct": drift(rss["warm"][server.name], rss["end"][server.name]),
        }
        for server in servers
    }
    return {
        "seconds": args.seconds,
        "stack": args.stack,
        "clients": args.clients,
        "client_processes": len(clients),
        "think_s": args.think,
        "warmup_s": args.warmup,
        "workers": args.workers,
        "rss_warm_kib": total["warm"],
        "rss_end_kib": total["end"],
        "rss_closed_kib": total["closed"],
        "rss_peak_kib": sum(peaks.values()),
        "rss_drift_pct": drift(total["warm"], total["end"]),
        "per_worker": per_worker,
        "errors": errors + server_errors,
        "server_errors": server_errors,
        "first_errors": first_errors[:10],
        "error_kinds": dict(sorted(kinds.items(), key=lambda item: -item[1][0])),
        "hung": problems,
        "ops": ops,
        "ops_per_s": round(sum(ops.values()) / args.seconds, 1),
        "calls_measured": len(latencies),
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 2),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
        "p999_ms": round(percentile(latencies, 0.999) * 1000, 2),
        "max_ms": round(latencies[-1] * 1000, 2) if latencies else None,
        "cpu_pct": cpu,
        "pids": {proc.name: proc.pid for proc in (*servers, *helpers, *clients)},
        "stream_chunks_read": streamed,
        "notifications": notifications,
    }


def server_tracebacks(name: str, log: str) -> list[tuple[str, str]]:
    """Each traceback a server logged, as (kind, message): the kind is the server and the
    exception's type, the message the exception's line (the last unindented line of the
    traceback) with the log line before the traceback (what the server was doing)."""
    found = []
    lines = log.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("Traceback (most recent"):
            continue
        context = lines[i - 1].strip() if i else ""
        end = i + 1
        while end < len(lines) and (lines[end].startswith(" ") or not lines[end].strip()):
            end += 1
        exception = lines[end].strip() if end < len(lines) else "(traceback cut short)"
        found.append((f"{name}: {exception.split(':')[0]}", f"{context} | {exception}"[:300]))
    return found


def drift(warm: int, end: int) -> float:
    return round(100.0 * (end - warm) / max(warm, 1), 2)


def print_report(report: dict[str, Any]) -> None:
    mib = 1024.0
    print(
        f"soak: {report['clients']} clients in {report['client_processes']} processes x "
        f"{report['seconds']:.0f} s (think {report['think_s']:g} s), "
        + (
            f"{report['workers']} workers behind haproxy round-robin, sessions and streams "
            "through Redis"
            if report["workers"]
            else "one uvicorn worker"
        )
        + f" ({report['stack']} stack)"
    )
    print(
        f"  RSS  after warm-up ({report['warmup_s']:g} s) {report['rss_warm_kib'] / mib:.1f} MiB"
        f"  end {report['rss_end_kib'] / mib:.1f} MiB  drift {report['rss_drift_pct']:+.2f} %"
        f"  (target < 5 %)  peak {report['rss_peak_kib'] / mib:.1f} MiB"
        f"  clients closed {report['rss_closed_kib'] / mib:.1f} MiB"
    )
    for name, worker in report["per_worker"].items() if report["workers"] else ():
        print(
            f"    {name}: RSS {worker['rss_warm_kib'] / mib:.1f} -> "
            f"{worker['rss_end_kib'] / mib:.1f} MiB, drift {worker['rss_drift_pct']:+.2f} %,"
            f" peak {worker['rss_peak_kib'] / mib:.1f} MiB"
        )
    if "redis_memory" in report:
        memory = report["redis_memory"]
        print(
            f"  Redis used_memory after warm-up {memory['warm'] / 1024:.0f} KiB  end "
            f"{memory['end'] / 1024:.0f} KiB  drift {report['redis_drift_pct']:+.2f} %  "
            f"clients closed {memory['closed'] / 1024:.0f} KiB; keys "
            + " -> ".join(str(report["redis_keys"][when]) for when in ("warm", "end", "closed"))
            + " (the events of streams still live or dropped before their end, ttl 600 s)"
        )
    print(
        f"  errors {report['errors']} ({report['server_errors']} logged by the server)"
        + (", by kind (count, kind, the first one):" if report["error_kinds"] else "")
        + "".join(
            f"\n    {n:5d} x {kind}\n            first: {first}"
            for kind, (n, first) in report["error_kinds"].items()
        )
    )
    print(f"  hung {len(report['hung'])}" + "".join(f"\n    {h}" for h in report["hung"]))
    print(
        f"  echo latency p50 {report['p50_ms']} ms  p99 {report['p99_ms']} ms (target < 100 ms)"
        f"  p99.9 {report['p999_ms']} ms  max {report['max_ms']} ms"
        f"  ({report['calls_measured']} calls after warm-up)"
    )
    cpu = "  ".join(f"{name} {pct} %" for name, pct in report["cpu_pct"].items())
    print(f"  CPU (% of one core) {cpu}")
    print(
        f"  ops {report['ops']} ({report['ops_per_s']}/s)  stream chunks read slowly "
        f"{report['stream_chunks_read']}  notifications to listeners {report['notifications']}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1800)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument(
        "--procs", type=int, default=os.cpu_count() or 1, help="client processes (one per core)"
    )
    parser.add_argument("--think", type=float, default=1.0, help="seconds between a client's ops")
    parser.add_argument("--warmup", type=float, help="default: a tenth of the run, 5 to 60 s")
    parser.add_argument("--grace", type=float, default=20.0, help="seconds allowed to close")
    parser.add_argument(
        "--tick", type=float, default=0.1, help="server: seconds between resource updates"
    )
    parser.add_argument(
        "--list-changed", type=float, default=5.0, help="server: seconds between tools changes"
    )
    parser.add_argument(
        "--kill-after",
        type=float,
        default=15.0,
        help="seconds past the grace before a client process still running is killed",
    )
    parser.add_argument(
        "--inject-hang",
        action="store_true",
        help="the first client process gets a task that never ends (the harness's own test)",
    )
    parser.add_argument(
        "--stack",
        choices=("serve_http", "h11"),
        default="serve_http",
        help="serve_http: the stack serve_http runs by default (uvloop + httptools when "
        "installed, with its header deadline); h11: plain uvicorn on asyncio + h11",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="N > 0: N workers on one redis-server behind haproxy round-robin (make "
        "soak-cluster); 0: one uvicorn worker alone",
    )
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args()
    # Ctrl-C or a SIGTERM still stops every process started here (soak()'s finally).
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if args.warmup is None:
        args.warmup = min(60.0, max(5.0, args.seconds / 10))
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        work = Path(tmp)
        report = soak(args, work)
        print_report(report)
        if report["hung"] or report["errors"]:
            for log in sorted(work.glob("*.log")):
                text = log.read_text(errors="replace").strip()
                if text:
                    print(f"--- {log.name} (last 3000 characters) ---\n{text[-3000:]}")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))
    return 2 if report["hung"] else 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
