"""Round-trip benchmark driver (``make bench-rt``): MCP ``tools/call echo`` round trips.

Runs every available peer configuration with the same call counts, pins the client and
the server to different CPUs where possible, and prints one table::

    implementation | protocol | transport | mode | calls/s | p50 ms | p99 ms | cpu us c+s | x TS
        | x official | x floor

``cpu us c+s``: the client's and the server's CPU microseconds per call in that run (Python
clients; see ``harness.py``), far less moved by outside load than calls/s.

Ratios are throughput ratios (calls/s divided by the reference's calls/s for the same
protocol version, transport and mode; the median of the ratios of the two configurations'
runs in the same round, see ``paired_ratio``): ``x TS`` against the TypeScript SDK
(handshake rows only), ``x official`` against the official Python SDK, ``x floor`` against
the raw msgspec floor. Handshake-era rows (2025-11-25) divide by
``official-py`` and ``raw-floor``; the stateless 2026-07-28 rows (stdio only) by
``official-py-2026`` and ``raw-floor-2026``. There are no 2026-07-28 in-memory rows (the
official client skips JSON-RPC for an in-process server, so nothing comparable) and no
TypeScript 2026 row (SDK 1.32.2 does not speak 2026-07-28). Each configuration is a client command speaking the common bench
CLI (see ``harness.py``) plus, for stdio, a server command; the client prints one JSON line.

    python bench/rt/run.py                 # full run (seq 2000, conc 10000, warm-up 500)
    python bench/rt/run.py --quick         # smoke-sized run
    python bench/rt/run.py --only official-py,raw-floor --repeat 5 --json out.json
    python bench/rt/run.py --extras        # also the alternative flavours (see PEERS)

Adding an implementation (e.g. mcpbind) = adding ``Peer`` entries to ``peers()``: see the
placeholder marked ``MCPBIND`` below.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PEERS_DIR = HERE / "peers"
TS_DIR = PEERS_DIR / "ts"
PY = sys.executable
MODES = ("sequential", "concurrent")

HANDSHAKE = "2025-11-25"
STATELESS = "2026-07-28"

# Throughput ratios are computed against these implementations (same protocol version,
# transport and mode).
SDK_REFERENCE = {HANDSHAKE: "official-py", STATELESS: "official-py-2026"}
FLOOR_REFERENCE = {HANDSHAKE: "raw-floor", STATELESS: "raw-floor-2026"}
TS_REFERENCE = {HANDSHAKE: "ts-sdk"}  # issue 15's targets are against the TypeScript SDK
NO_2026_ROWS = (
    "no 2026-07-28 rows in memory (the official client bypasses JSON-RPC for an in-process "
    "server) or for the TypeScript SDK (1.32.2 has no 2026-07-28)"
)


@dataclass(frozen=True)
class Peer:
    """One benchmark configuration.

    ``client`` is a command speaking the harness CLI (``--transport``, ``--seq``, ``--conc``,
    ``--inflight``, ``--warmup``, then ``-- SERVER_CMD`` for stdio) that prints one JSON line.
    ``server`` is the stdio server command (``None`` for in-memory). ``available`` returns a
    skip reason, or ``None`` when the peer can run. ``extra`` peers only run with --extras.
    ``protocol`` is the wire era the row measures; it picks the ratios' references.
    """

    impl: str
    transport: str
    client: list[str]
    server: list[str] | None = None
    available: Callable[[], str | None] = field(default=lambda: None)
    extra: bool = False
    note: str = ""
    protocol: str = HANDSHAKE

    @property
    def key(self) -> str:
        return f"{self.impl}/{self.transport}"


# ---- availability checks ---------------------------------------------------------------


def _module_missing(name: str) -> str | None:
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = False
    return None if found else f"python module {name!r} is not installed"


def _official_py_available() -> str | None:
    return _module_missing("mcp")


def _floor_available() -> str | None:
    return _module_missing("msgspec")


#: Node 24 from npm, as bench-http runs its TS server and load generator with (`make
#: bench/http/loadgen/node_modules`); else the ``node`` on PATH; ``--node`` chooses another.
BUNDLED_NODE = HERE.parent / "http" / "loadgen" / "node_modules" / ".bin" / "node"
NODE: str | None = str(BUNDLED_NODE) if BUNDLED_NODE.exists() else shutil.which("node")


def _ts_available() -> str | None:
    if NODE is None:
        return "node is not installed (run `make bench/http/loadgen/node_modules`)"
    if not (TS_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        return f"TS peer not installed (no node_modules): run `npm ci --prefix {_display(TS_DIR)}`"
    return None


MCPBIND_PEER_DIR = PEERS_DIR / "mcpbind"


def _mcpbind_available() -> str | None:
    """Skip mcpbind until it has a client and its bench peer files exist (never fail)."""
    try:
        client_mod = importlib.import_module("mcpbind.client")
    except ImportError:
        return "mcpbind has no client yet (mcpbind.client is not importable)"
    except Exception as exc:  # a half-written mcpbind must not break the benchmark
        return f"mcpbind.client failed to import: {exc!r}"
    if not hasattr(client_mod, "Client"):
        return "mcpbind has no client yet (mcpbind.client.Client is missing)"
    missing = [
        name
        for name in ("bench_client.py", "echo_server.py")
        if not (MCPBIND_PEER_DIR / name).is_file()
    ]
    if missing:
        return f"mcpbind bench peer not written yet: {', '.join(missing)} in {MCPBIND_PEER_DIR}"
    return None


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# ---- the configurations -------------------------------------------------------------------


def peers() -> list[Peer]:
    py_client = [PY, str(PEERS_DIR / "official_py" / "bench_client.py")]
    py_server = [PY, str(PEERS_DIR / "official_py" / "echo_server.py")]
    ts_client = [NODE or "node", str(TS_DIR / "bench_client.mjs")]
    ts_server = [NODE or "node", str(TS_DIR / "echo_server.mjs")]
    floor = [PY, str(HERE / "raw_floor.py")]
    return [
        # Official Python SDK (mcp 2.x): lowlevel Server, mcp.Client(mode="legacy").
        Peer("official-py", "stdio", py_client, py_server, _official_py_available),
        Peer("official-py", "memory", py_client, None, _official_py_available),
        # Official TypeScript SDK: McpServer + zod tool, Client.
        Peer("ts-sdk", "stdio", ts_client, ts_server, _ts_available),
        Peer("ts-sdk", "memory", ts_client, None, _ts_available),
        # Raw floors: msgspec JSON-RPC line echo, no SDK.
        Peer("raw-floor", "stdio", [*floor, "client"], [*floor, "server"], _floor_available),
        Peer("raw-floor", "memory", [*floor, "client"], None, _floor_available),
        Peer(
            "raw-floor-sync",
            "stdio",
            [*floor, "client", "--driver", "sync"],
            [*floor, "server"],
            _floor_available,
            note="informational",
        ),
        Peer(
            "raw-floor-asyncio-q",
            "memory",
            [*floor, "client", "--queue", "asyncio"],
            None,
            _floor_available,
            note="informational",
        ),
        # ---- MCPBIND: skipped (never failed) while mcpbind.client.Client or the peer files
        # bench/rt/peers/mcpbind/{echo_server,bench_client}.py are missing. The client passes
        # its connectors to harness.main, like peers/official_py/bench_client.py.
        Peer(
            "mcpbind",
            "stdio",
            [PY, str(MCPBIND_PEER_DIR / "bench_client.py")],
            [PY, str(MCPBIND_PEER_DIR / "echo_server.py")],
            _mcpbind_available,
        ),
        Peer(
            "mcpbind-def",
            "stdio",
            [PY, str(MCPBIND_PEER_DIR / "bench_client.py")],
            [PY, str(MCPBIND_PEER_DIR / "echo_server.py"), "--tool", "def"],
            _mcpbind_available,
            note="def echo(text: str) -> str",
        ),
        # The official SDK's MCPServer serving the same plain def tool.
        Peer(
            "official-py-mcpserver",
            "stdio",
            py_client,
            [*py_server, "--flavor", "mcpserver"],
            _official_py_available,
            note="MCPServer (ex-FastMCP) @tool def echo(text: str) -> str",
        ),
        Peer(
            "mcpbind",
            "memory",
            [PY, str(MCPBIND_PEER_DIR / "bench_client.py")],
            None,
            _mcpbind_available,
        ),
        # ---- the stateless 2026-07-28 era (stdio only; see NO_2026_ROWS) ------------------
        # Official SDK: the same low-level server; a pinned version skips server/discover.
        Peer(
            "official-py-2026",
            "stdio",
            [*py_client, "--mode", STATELESS],
            py_server,
            _official_py_available,
            protocol=STATELESS,
        ),
        Peer(
            "raw-floor-2026",
            "stdio",
            [*floor, "client", "--protocol", STATELESS],
            [*floor, "server", "--protocol", STATELESS],
            _floor_available,
            protocol=STATELESS,
        ),
        Peer(
            "mcpbind-2026",
            "stdio",
            [PY, str(MCPBIND_PEER_DIR / "bench_client.py"), "--protocol-version", STATELESS],
            [PY, str(MCPBIND_PEER_DIR / "echo_server.py")],
            _mcpbind_available,
            protocol=STATELESS,
        ),
        Peer(
            "mcpbind-def-2026",
            "stdio",
            [PY, str(MCPBIND_PEER_DIR / "bench_client.py"), "--protocol-version", STATELESS],
            [PY, str(MCPBIND_PEER_DIR / "echo_server.py"), "--tool", "def"],
            _mcpbind_available,
            protocol=STATELESS,
            note="def echo(text: str) -> str",
        ),
        Peer(
            "official-py-mcpserver-2026",
            "stdio",
            [*py_client, "--mode", STATELESS],
            [*py_server, "--flavor", "mcpserver"],
            _official_py_available,
            protocol=STATELESS,
            note="MCPServer @tool def echo(text: str) -> str",
        ),
        # ---- extras (--extras): alternative flavours of the SDK peers ---------------------
        Peer(
            "official-py-auto",
            "stdio",
            [*py_client, "--mode", "auto"],
            py_server,
            _official_py_available,
            extra=True,
            note="Client(mode='auto'): server/discover, 2026-07-28 per-request era",
            protocol=STATELESS,
        ),
        Peer(
            "ts-sdk-lowlevel",
            "stdio",
            ts_client,
            [*ts_server, "--flavor", "lowlevel"],
            _ts_available,
            extra=True,
            note="low-level Server with raw handlers",
        ),
    ]


# ---- CPU pinning --------------------------------------------------------------------------


def pick_cpus() -> tuple[int, int] | None:
    """Two distinct CPUs (client, server) from this process's affinity set, if any."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    return cpus[0], cpus[1]


def placement_of(round_no: int, cpus: tuple[int, int] | None) -> tuple[int, int] | None:
    """The (client, server) CPUs of round ``round_no`` (from 1): swapped every other round.

    The implementations do not split their work alike (the raw floor spends about three times
    the server's instructions in its client, mcpbind about as much on each side), so outside
    load on one CPU slows them unequally depending on which side runs there; swapping gives
    every configuration both placements, the same ones in the same rounds."""
    if cpus is None or round_no % 2:
        return cpus
    return cpus[1], cpus[0]


def pinned(cmd: Sequence[str], cpu: int | None) -> list[str]:
    """Prefix ``cmd`` so it runs on ``cpu`` (exec-style, so the pid is the command's own)."""
    if cpu is None:
        return list(cmd)
    taskset = shutil.which("taskset")
    if taskset:
        return [taskset, "-c", str(cpu), *cmd]
    wrapper = (
        "import os,sys; os.sched_setaffinity(0,{int(sys.argv[1])}); "
        "os.execvp(sys.argv[2], sys.argv[2:])"
    )
    return [PY, "-c", wrapper, str(cpu), *cmd]


# ---- running ----------------------------------------------------------------------------------


@dataclass
class Outcome:
    peer: Peer
    status: str  # "ok" | "skipped" | "failed"
    reason: str = ""
    runs: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)  # chosen run per mode (--stat)
    wall_s: float = 0.0


def run_once(peer: Peer, args: argparse.Namespace, cpus: tuple[int, int] | None) -> dict[str, Any]:
    client_cpu, server_cpu = cpus if cpus else (None, None)
    cmd = pinned(peer.client, client_cpu)
    cmd += ["--transport", peer.transport, "--seq", str(args.seq), "--conc", str(args.conc)]
    cmd += ["--inflight", str(args.inflight), "--warmup", str(args.warmup)]
    if peer.server is not None:
        cmd += ["--", *pinned(peer.server, server_cpu)]
    if args.verbose:
        print("+", " ".join(cmd), file=sys.stderr)
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=args.timeout, cwd=HERE, check=False
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"exit {proc.returncode}; stderr tail:\n{tail}")
    data: dict[str, Any] = json.loads(lines[-1])
    data["cpus"] = list(cpus) if cpus else None  # (client, server) of this run
    for mode in MODES:
        if data[mode]["calls"] <= 0 or data[mode]["calls_per_s"] <= 0:
            raise RuntimeError(f"non-positive result for {mode}: {data[mode]}")
    return data


def pick_run(runs: list[dict[str, Any]], stat: str) -> dict[str, Any]:
    """Per mode, the run with the best (highest) or the median calls/s.

    Best-of-N is the default: on a shared machine, other load only ever makes a run slower,
    so the fastest run is the most reproducible estimate. Every run's calls/s is kept in
    ``runs_calls_per_s``.
    """
    merged: dict[str, Any] = {k: v for k, v in runs[0].items() if k not in MODES}
    for mode in MODES:
        ordered = sorted(runs, key=lambda r: r[mode]["calls_per_s"])
        index = len(ordered) - 1 if stat == "best" else (len(ordered) - 1) // 2
        merged[mode] = dict(ordered[index][mode])
        merged[mode]["runs_calls_per_s"] = [r[mode]["calls_per_s"] for r in runs]
    return merged


def run_all(
    chosen: Sequence[Peer], args: argparse.Namespace, cpus: tuple[int, int] | None
) -> list[Outcome]:
    """Run every available peer ``--repeat`` times, round-robin.

    Round-robin (A B C, A B C, ...) rather than A A A B B B spreads each configuration's
    runs over the whole benchmark, so a burst of outside load hits one run of several
    configurations instead of every run of one; and every configuration of one round runs
    with the same CPU placement (see :func:`placement_of`), so the ratios pair runs of one
    round (:func:`paired_ratio`).
    """
    outcomes = []
    for peer in chosen:
        reason = peer.available()
        outcomes.append(Outcome(peer, "skipped", reason) if reason else Outcome(peer, "ok"))
    for round_no in range(1, args.repeat + 1):
        placement = placement_of(round_no, cpus)
        for outcome in outcomes:
            if outcome.status != "ok":
                continue
            start = time.perf_counter()
            try:
                outcome.runs.append(run_once(outcome.peer, args, placement))
            except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError, KeyError) as exc:
                outcome.status, outcome.reason = "failed", str(exc)
            elapsed = time.perf_counter() - start
            outcome.wall_s += elapsed
            status = "FAILED" if outcome.status == "failed" else f"{elapsed:.1f}s"
            print(
                f"  [{round_no}/{args.repeat}] {outcome.peer.key}: {status}",
                file=sys.stderr,
                flush=True,
            )
    for outcome in outcomes:
        if outcome.status == "ok":
            outcome.result = pick_run(outcome.runs, args.stat)
    return outcomes


# ---- reporting ----------------------------------------------------------------------------


def paired_ratio(outcome: Outcome, reference: Outcome, mode: str) -> float:
    """``outcome``'s calls/s over ``reference``'s: the median, over the rounds, of the ratio of
    their runs in the same round (both ran minutes apart at most, with the same CPU placement),
    so load that comes and goes between rounds cancels out instead of favouring whichever
    configuration happened to get the quiet minute. Without runs: the shown results' ratio."""
    pairs = [
        mine[mode]["calls_per_s"] / theirs[mode]["calls_per_s"]
        for mine, theirs in zip(outcome.runs, reference.runs, strict=False)
    ]
    if pairs:
        return float(statistics.median(pairs))
    return float(outcome.result[mode]["calls_per_s"] / reference.result[mode]["calls_per_s"])


def _cpu_cell(numbers: dict[str, Any]) -> str:
    """Client + server CPU microseconds per call (``-`` where the client does not report it)."""
    client, server = numbers.get("client_cpu_us"), numbers.get("server_cpu_us")
    if client is None:
        return "-"
    return f"{client:.1f}+{server:.1f}" if server is not None else f"{client:.1f}+-"


def render_table(outcomes: Sequence[Outcome]) -> str:
    done = [o for o in outcomes if o.status == "ok"]

    def ratio(references: dict[str, str], mine: Outcome, mode: str) -> str:
        impl = references.get(mine.peer.protocol)
        for o in done:
            if o.peer.impl == impl and o.peer.transport == mine.peer.transport:
                return f"{paired_ratio(mine, o, mode):.2f}x"
        return "-"

    header = (
        "implementation",
        "protocol",
        "transport",
        "mode",
        "calls/s",
        "p50 ms",
        "p99 ms",
        "cpu us c+s",
        "x TS",
        "x official",
        "x floor",
    )
    rows: list[tuple[str, ...]] = []
    for o in done:
        for mode in MODES:
            r = o.result[mode]
            mode_label = "seq" if mode == "sequential" else f"{r['inflight']} in flight"
            rows.append(
                (
                    o.peer.impl,
                    o.peer.protocol,
                    o.peer.transport,
                    mode_label,
                    f"{r['calls_per_s']:,.0f}",
                    f"{r['p50_ms']:.3f}",
                    f"{r['p99_ms']:.3f}",
                    _cpu_cell(r),
                    ratio(TS_REFERENCE, o, mode),
                    ratio(SDK_REFERENCE, o, mode),
                    ratio(FLOOR_REFERENCE, o, mode),
                )
            )
    # Group rows by transport, mode, then protocol; peer order is kept within a group.
    rows.sort(key=lambda row: (row[2] != "stdio", row[3] != "seq", row[1]))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    right = {4, 5, 6, 7, 8, 9, 10}

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(cells)
        ).rstrip()

    lines = [fmt(header), "  ".join("-" * w for w in widths)]
    lines += [fmt(row) for row in rows]
    return "\n".join(lines)


def render_notes(outcomes: Sequence[Outcome]) -> str:
    lines: list[str] = []
    for o in outcomes:
        if o.status == "ok":
            detail = o.result.get("detail", "")
            note = f" ({o.peer.note})" if o.peer.note else ""
            lines.append(f"  {o.peer.key}: {detail}{note} [{o.wall_s:.1f}s]")
    for o in outcomes:
        if o.status == "skipped":
            lines.append(f"  SKIPPED {o.peer.key}: {o.reason}")
    for o in outcomes:
        if o.status == "failed":
            lines.append(f"  FAILED {o.peer.key}: {o.reason}")
    if any(o.peer.protocol == STATELESS for o in outcomes):
        lines.append(f"  {NO_2026_ROWS}")
    return "\n".join(lines)


def _loadavg() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


# ---- main -----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small N (smoke test)")
    parser.add_argument("--seq", type=int, help="sequential calls (default 2000; quick 50)")
    parser.add_argument("--conc", type=int, help="concurrent calls (default 10000; quick 200)")
    parser.add_argument("--inflight", type=int, default=32, help="outstanding calls (default 32)")
    parser.add_argument("--warmup", type=int, help="untimed calls per mode (default 500; quick 20)")
    parser.add_argument(
        "--repeat", type=int, help="runs per config (default 3; quick 1); see --stat"
    )
    parser.add_argument(
        "--stat",
        choices=("best", "median"),
        default="best",
        help="which of the repeated runs the table shows, per mode (default best)",
    )
    parser.add_argument("--only", help="comma-separated implementations or impl/transport keys")
    parser.add_argument("--extras", action="store_true", help="also run the extra flavours")
    parser.add_argument("--no-pin", action="store_true", help="do not pin client/server CPUs")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per client run")
    parser.add_argument("--json", type=Path, help="also write all results to this file")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each command")
    parser.add_argument(
        "--node", help="the node binary of the TS peer (default: Node 24 from npm, else PATH)"
    )
    args = parser.parse_args(argv)
    defaults = (50, 200, 20, 1) if args.quick else (2000, 10000, 500, 3)
    for name, default in zip(("seq", "conc", "warmup", "repeat"), defaults, strict=True):
        if getattr(args, name) is None:
            setattr(args, name, default)
    return args


def select(all_peers: Sequence[Peer], args: argparse.Namespace) -> list[Peer]:
    if args.only:
        wanted = {w.strip() for w in args.only.split(",") if w.strip()}
        return [p for p in all_peers if p.impl in wanted or p.key in wanted]
    return [p for p in all_peers if args.extras or not p.extra]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    cpus = None if args.no_pin else pick_cpus()
    if args.node:
        global NODE
        NODE = shutil.which(args.node)
    chosen = select(peers(), args)
    pin_text = (
        f"client on CPU {cpus[0]}, server on CPU {cpus[1]}, swapped every other round"
        if cpus
        else "not pinned"
    )
    print(
        f"bench-rt: seq={args.seq} conc={args.conc} inflight={args.inflight} "
        f"warmup={args.warmup} repeat={args.repeat} ({args.stat}); {pin_text}; "
        f"python {sys.version.split()[0]}",
        flush=True,
    )
    load_before = _loadavg()
    outcomes = run_all(chosen, args, cpus)
    load_after = _loadavg()
    print()
    print(render_table(outcomes))
    print()
    print(render_notes(outcomes))
    if load_before is not None and load_after is not None:
        print(f"  1-min load average: {load_before:.2f} before, {load_after:.2f} after", end="")
        busy = len(cpus) if cpus else 1
        print(
            " (other processes competed for the CPUs: numbers are noisy)"
            if load_before > 0.5 or load_after > busy + 0.5
            else ""
        )
    if args.json:
        payload = {
            "settings": {
                k: getattr(args, k) for k in ("seq", "conc", "inflight", "warmup", "repeat", "stat")
            },
            "loadavg_1min": [load_before, load_after],
            "cpus": list(cpus) if cpus else None,
            "results": [
                {
                    "impl": o.peer.impl,
                    "protocol": o.peer.protocol,
                    "transport": o.peer.transport,
                    "status": o.status,
                    "reason": o.reason,
                    "result": o.result,
                }
                for o in outcomes
            ],
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 1 if any(o.status == "failed" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
