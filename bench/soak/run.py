"""Soak benchmark (issue 16): one uvicorn worker serving ``server.py`` under a steady mix of
work for a long time; prints RSS drift, errors, echo latency percentiles and the CPU of every
process.

    python bench/soak/run.py [--seconds 1800] [--clients 50] [--procs N] [--json out.json]

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


def start_server(args: argparse.Namespace, work: Path) -> tuple[Proc, str]:
    port = free_port()
    command = [sys.executable, str(HERE / "server.py"), "--port", str(port)]
    command += ["--tick", str(args.tick), "--list-changed", str(args.list_changed)]
    command += ["--http", args.stack]
    log = work / "server.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr)
    server = Proc("server", process, log=log)
    assert process.stdout is not None
    line = process.stdout.readline().decode()
    if not line.startswith("ready"):
        stop(server)
        raise RuntimeError(f"server did not start: {line!r}")
    return server, f"http://127.0.0.1:{port}/mcp"


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


def sleep_until(instant: float, server: Proc, rss: list[int]) -> None:
    """Sleep until ``instant``, sampling the server's RSS every 5 s (for the peak)."""
    while (left := instant - time.monotonic()) > 0:
        time.sleep(min(left, 5.0))
        if server.process.poll() is None:
            rss.append(rss_kib(server.pid))


def percentile(ordered: list[float], q: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def soak(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    server, url = start_server(args, work)
    clients: list[Proc] = []
    problems: list[str] = []
    rss = {"warm": 0, "end": 0, "closed": 0}
    peak: list[int] = [0]
    window = float("nan")
    try:
        start = time.monotonic() + 2.0  # every client process has imported by then
        clients = start_clients(args, url, start, work)
        everyone = [server, *clients]
        sleep_until(start + args.warmup, server, peak)
        rss["warm"] = rss_kib(server.pid)
        sample_cpu(everyone)
        measured_from = time.monotonic()
        sleep_until(start + args.seconds, server, peak)
        rss["end"] = rss_kib(server.pid)
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
        rss["closed"] = rss_kib(server.pid)
        peak.append(rss["closed"])
        if server.process.poll() is not None:
            problems.append(f"server exited during the run (status {server.process.returncode})")
    finally:
        for proc in clients:
            kill(proc)
        stop(server)
    if server.killed:
        problems.append(f"server (pid {server.pid}) did not stop on SIGTERM: killed")
    return merge(args, server, clients, rss, max(peak), window, problems)


def merge(
    args: argparse.Namespace,
    server: Proc,
    clients: list[Proc],
    rss: dict[str, int],
    peak: int,
    window: float,
    problems: list[str],
) -> dict[str, Any]:
    latencies: list[float] = []
    ops: dict[str, int] = {}
    errors = 0
    first_errors: list[str] = []
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
        streamed += part["streamed"]
        notifications += part["notifications"]
        problems += [f"{proc.name}: hung task {task}" for task in part["hung"]]
        if proc.process.returncode not in (0, None) and not proc.killed:
            problems.append(f"{proc.name} exited with status {proc.process.returncode}")
    # The server logs a traceback for anything that went wrong on its side (its change
    # ticker included): each is an error of the run.
    assert server.log is not None
    server_errors = server.log.read_text(errors="replace").count("Traceback (most recent")
    latencies.sort()
    cpu = {
        proc.name: round(100 * (proc.cpu[1] - proc.cpu[0]) / window, 1)
        for proc in (server, *clients)
        if len(proc.cpu) == 2
    }
    return {
        "seconds": args.seconds,
        "stack": args.stack,
        "clients": args.clients,
        "client_processes": len(clients),
        "think_s": args.think,
        "warmup_s": args.warmup,
        "rss_warm_kib": rss["warm"],
        "rss_end_kib": rss["end"],
        "rss_closed_kib": rss["closed"],
        "rss_peak_kib": peak,
        "rss_drift_pct": round(100.0 * (rss["end"] - rss["warm"]) / max(rss["warm"], 1), 2),
        "errors": errors + server_errors,
        "server_errors": server_errors,
        "first_errors": first_errors[:10],
        "hung": problems,
        "ops": ops,
        "ops_per_s": round(sum(ops.values()) / args.seconds, 1),
        "calls_measured": len(latencies),
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 2),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
        "p999_ms": round(percentile(latencies, 0.999) * 1000, 2),
        "max_ms": round(latencies[-1] * 1000, 2) if latencies else None,
        "cpu_pct": cpu,
        "pids": {proc.name: proc.pid for proc in (server, *clients)},
        "stream_chunks_read": streamed,
        "notifications": notifications,
    }


def print_report(report: dict[str, Any]) -> None:
    mib = 1024.0
    print(
        f"soak: {report['clients']} clients in {report['client_processes']} processes x "
        f"{report['seconds']:.0f} s (think {report['think_s']:g} s), one uvicorn worker"
        f" ({report['stack']} stack)"
    )
    print(
        f"  RSS  after warm-up ({report['warmup_s']:g} s) {report['rss_warm_kib'] / mib:.1f} MiB"
        f"  end {report['rss_end_kib'] / mib:.1f} MiB  drift {report['rss_drift_pct']:+.2f} %"
        f"  (target < 5 %)  peak {report['rss_peak_kib'] / mib:.1f} MiB"
        f"  clients closed {report['rss_closed_kib'] / mib:.1f} MiB"
    )
    print(
        f"  errors {report['errors']} ({report['server_errors']} logged by the server)"
        + "".join(f"\n    {e}" for e in report["first_errors"])
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
