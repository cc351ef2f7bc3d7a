"""Cold-start benchmark (``make bench-cold``): whole processes, timed from spawn to exit.

Each case is a fresh Python process (the environment's ``PYTHONPATH`` is kept, so a
worktree's code is what runs), run ``--runs`` times round-robin after one untimed warm-up
(which fills the OS page cache and writes ``.pyc`` files, as an installed package has them:
``PYTHONDONTWRITEBYTECODE`` is dropped from the children's environment, else every run would
time the compiler); the table gives the fastest and the median wall time, and the fastest
CPU time (user + system of the process and the children it waited for, which outside load
moves less than wall time). Outside load only ever slows a run, so the minimum is the
reproducible figure; the targets are checked on it.

* ``python``: the interpreter alone (``python -c pass``), the floor under every row.
* ``import``: ``import mcpbind`` with ``Client`` and ``Server``; the official SDK's
  ``import mcp`` with its ``Client`` and ``MCPServer``.
* ``ls``: ``mcpbind ls "python <echo server>"`` (the CLI, spawning an mcpbind stdio server,
  listing everything); the official SDK's CLI has no such command, so its row is the
  minimal client script ``bench/cold/official_ls.py`` against its own ``MCPServer`` stdio
  echo server (spawn, initialize, list, exit).

Targets (issue 15): import under 60 ms, ``ls`` under 300 ms, on a quiet machine.

    python bench/coldstart.py                  # 10 runs per case
    python bench/coldstart.py --runs 3 --check # exit 1 when a target does not hold
    python bench/coldstart.py --quick          # smoke size (the test suite runs this)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable
MCPBIND_SERVER = f"{PY} {HERE / 'rt' / 'peers' / 'mcpbind' / 'echo_server.py'} --tool def"
OFFICIAL_SERVER = [PY, str(HERE / "rt" / "peers" / "official_py" / "echo_server.py")]

#: Wall-time targets in ms, by case name (checked on the fastest run).
TARGETS = {"mcpbind import": 60.0, "mcpbind ls": 300.0}


@dataclass(frozen=True)
class Case:
    name: str
    command: list[str]
    needs: str  # the module the case needs ("" for none)
    expect: str = ""  # a string its stdout must contain (the work was done)


def cases() -> list[Case]:
    return [
        Case("python", [PY, "-c", "pass"], ""),
        Case(
            "mcpbind import",
            [PY, "-c", "import mcpbind; from mcpbind import Client, Server"],
            "mcpbind",
        ),
        Case(
            "official import",
            [PY, "-c", "import mcp; from mcp import Client; from mcp.server import MCPServer"],
            "mcp",
        ),
        Case(
            "mcpbind ls",
            [PY, "-m", "mcpbind.cli", "ls", MCPBIND_SERVER],
            "mcpbind",
            expect="echo",
        ),
        Case(
            "official ls",
            [PY, str(HERE / "cold" / "official_ls.py"), *OFFICIAL_SERVER, "--flavor", "mcpserver"],
            "mcp",
            expect="tool echo",
        ),
    ]


def _missing(module: str) -> bool:
    try:
        return module != "" and importlib.util.find_spec(module) is None
    except (ImportError, ValueError):
        return True


_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_once(case: Case, timeout: float) -> tuple[float, float]:
    """(wall, CPU) seconds of one run; raises if it fails or did not do its work."""
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(case.command, capture_output=True, text=True, timeout=timeout, env=_ENV)
    elapsed = time.perf_counter() - start, _children_cpu() - cpu
    if proc.returncode != 0 or case.expect not in proc.stdout:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise RuntimeError(f"{case.name}: exit {proc.returncode}: " + " | ".join(tail))
    return elapsed


def run(args: argparse.Namespace) -> dict[str, list[tuple[float, float]]]:
    chosen = [c for c in cases() if not args.only or c.name in args.only]
    runnable = []
    for case in chosen:
        if _missing(case.needs):
            print(f"skipped {case.name}: python module {case.needs!r} is not installed")
            continue
        time_once(case, args.timeout)  # warm-up: page cache, .pyc files
        runnable.append(case)
    times: dict[str, list[tuple[float, float]]] = {c.name: [] for c in runnable}
    for _ in range(args.runs):  # round-robin: a burst of outside load hits every case once
        for case in runnable:
            times[case.name].append(time_once(case, args.timeout))
    return times


def report(times: dict[str, list[tuple[float, float]]]) -> tuple[str, bool]:
    walls = {name: [w for w, _ in runs] for name, runs in times.items()}
    cpus = {name: [c for _, c in runs] for name, runs in times.items()}
    floor = min(walls["python"]) if walls.get("python") else 0.0
    rows = [("case", "min ms", "median ms", "min - python ms", "CPU min ms", "target", "")]
    ok = True
    for name, values in walls.items():
        best = min(values) * 1000
        target = TARGETS.get(name)
        verdict = ""
        if target is not None:
            held = best < target
            ok = ok and held
            verdict = "holds" if held else "MISSED"
        rows.append(
            (
                name,
                f"{best:,.1f}",
                f"{statistics.median(values) * 1000:,.1f}",
                f"{best - floor * 1000:,.1f}" if name != "python" else "-",
                f"{min(cpus[name]) * 1000:,.1f}",
                f"< {target:.0f} ms" if target is not None else "",
                verdict,
            )
        )
    for pair in (("mcpbind import", "official import"), ("mcpbind ls", "official ls")):
        if all(p in walls for p in pair):
            ratio = min(walls[pair[1]]) / min(walls[pair[0]])
            rows.append((f"{pair[0]} vs official", "", "", "", "", "", f"{ratio:.1f}x faster"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(
            c.rjust(w) if 0 < i < 5 else c.ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines), ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, help="timed runs per case (default 10; quick 2)")
    parser.add_argument("--quick", action="store_true", help="smoke size")
    parser.add_argument("--only", type=lambda s: s.split(","), help="comma-separated case names")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per run")
    parser.add_argument("--json", type=Path, help="also write every run's seconds here")
    args = parser.parse_args(argv)
    if args.runs is None:
        args.runs = 2 if args.quick else 10
    times = run(args)
    table, ok = report(times)
    print(f"cold start: python {sys.version.split()[0]}, {args.runs} runs per case, wall time")
    print(table)
    if args.json:
        args.json.write_text(json.dumps(times, indent=2) + "\n")
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
