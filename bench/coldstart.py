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

What is measured depends on how mcpbind is installed, and the first line says which: users
run an installed wheel; ``make setup`` (hatchling) makes an editable install that is a plain
``.pth`` path entry, which costs nothing; an older setuptools editable install adds an import
hook that imports ``pathlib``, ``re`` and ``importlib.util`` into every process (about 10 ms
of the ``python`` row, and it hides what mcpbind itself pays for those modules).
``--python`` runs the cases under another interpreter (say a venv with the wheel installed:
``make bench-cold-wheel``); its installed mcpbind is measured (``PYTHONPATH`` is dropped).
``--instructions`` also counts each case's instructions once under callgrind (the process
itself, not the children it spawns): unlike wall time, outside load does not move them.

    python bench/coldstart.py                  # 10 runs per case
    python bench/coldstart.py --runs 3 --check # exit 1 when a target does not hold
    python bench/coldstart.py --quick          # smoke size (the test suite runs this)
    python bench/coldstart.py --instructions --only python,"mcpbind import"
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ECHO_SERVER = HERE / "rt" / "peers" / "mcpbind" / "echo_server.py"
OFFICIAL_SERVER = HERE / "rt" / "peers" / "official_py" / "echo_server.py"
FLAVOR = ("--flavor", "mcpserver")  # the official echo server on its MCPServer API

#: Each case's (wall, CPU) seconds per run.
Runs = dict[str, list[tuple[float, float]]]

#: Wall-time targets in ms, by case name (checked on the fastest run).
TARGETS = {"mcpbind import": 60.0, "mcpbind ls": 300.0}


@dataclass(frozen=True)
class Case:
    name: str
    command: list[str]
    needs: str  # the module the case needs ("" for none)
    expect: str = ""  # a string its stdout must contain (the work was done)


def cases(py: str) -> list[Case]:
    return [
        Case("python", [py, "-c", "pass"], ""),
        Case(
            "mcpbind import",
            [py, "-c", "import mcpbind; from mcpbind import Client, Server"],
            "mcpbind",
        ),
        Case(
            "official import",
            [py, "-c", "import mcp; from mcp import Client; from mcp.server import MCPServer"],
            "mcp",
        ),
        Case(
            "mcpbind ls",
            [py, "-m", "mcpbind.cli", "ls", f"{py} {ECHO_SERVER} --tool def"],
            "mcpbind",
            expect="echo",
        ),
        Case(
            "official ls",
            [py, str(HERE / "cold" / "official_ls.py"), py, str(OFFICIAL_SERVER), *FLAVOR],
            "mcp",
            expect="tool echo",
        ),
    ]


def child_env(py: str) -> dict[str, str]:
    """The children's environment: ``.pyc`` files written; ``PYTHONPATH`` kept for this
    interpreter (a worktree's code wins), dropped for another one (its install is measured)."""
    drop = {"PYTHONDONTWRITEBYTECODE"} | ({"PYTHONPATH"} if py != sys.executable else set())
    return {k: v for k, v in os.environ.items() if k not in drop}


_PROBE = """
import importlib.util, json, sys
spec = importlib.util.find_spec("mcpbind")
hooks = [m for m in sys.modules if m.startswith("__editable__")]
mcp = importlib.util.find_spec("mcp") is not None
url = None
if spec is not None:
    import importlib.metadata as md
    try:
        url = md.distribution("mcpbind").read_text("direct_url.json")
    except md.PackageNotFoundError:
        pass
print(json.dumps([spec and spec.origin, hooks, url, mcp]))
"""


def describe(py: str, env: dict[str, str]) -> tuple[str, set[str]]:
    """Which mcpbind the interpreter imports and how it is installed, and the modules it has."""
    out = subprocess.run([py, "-c", _PROBE], capture_output=True, text=True, env=env, check=True)
    origin, hooks, url, has_mcp = json.loads(out.stdout)
    available = {""} | ({"mcp"} if has_mcp else set())
    if origin is None:
        return "mcpbind is not installed", available
    available.add("mcpbind")
    where = str(Path(origin).parent)
    editable = url is not None and json.loads(url).get("dir_info", {}).get("editable", False)
    on_path = any(
        where.startswith(str(Path(p).resolve()))
        for p in env.get("PYTHONPATH", "").split(os.pathsep)
        if p
    )
    how = "from PYTHONPATH" if on_path else "editable install" if editable else "installed wheel"
    if hooks:
        how += f"; the editable install's import hook runs in every process ({hooks[0]})"
    elif editable:
        how += "; editable install as a .pth path entry (no import hook)"
    return f"mcpbind {where} ({how})", available


def time_once(case: Case, timeout: float, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run; raises if it fails or did not do its work."""
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(case.command, capture_output=True, text=True, timeout=timeout, env=env)
    elapsed = time.perf_counter() - start, _children_cpu() - cpu
    _check(case, proc)
    return elapsed


def _check(case: Case, proc: subprocess.CompletedProcess[str]) -> None:
    if proc.returncode != 0 or case.expect not in proc.stdout:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise RuntimeError(f"{case.name}: exit {proc.returncode}: " + " | ".join(tail))


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def count_instructions(case: Case, timeout: float, env: dict[str, str]) -> int:
    """Instructions the case's own process executes (callgrind, children not traced)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *case.command]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
        _check(case, proc)
        for line in out.read_text().splitlines():
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    raise RuntimeError(f"{case.name}: no instruction count in callgrind's output")


def run(args: argparse.Namespace, env: dict[str, str], available: set[str]) -> Runs:
    chosen = [c for c in cases(args.python) if not args.only or c.name in args.only]
    runnable = []
    for case in chosen:
        if case.needs not in available:
            print(f"skipped {case.name}: python module {case.needs!r} is not installed")
            continue
        time_once(case, args.timeout, env)  # warm-up: page cache, .pyc files
        runnable.append(case)
    times: Runs = {c.name: [] for c in runnable}
    for _ in range(args.runs):  # round-robin: a burst of outside load hits every case once
        for case in runnable:
            times[case.name].append(time_once(case, args.timeout, env))
    return times


def report(times: Runs, instructions: dict[str, int]) -> tuple[str, bool]:
    walls = {name: [w for w, _ in runs] for name, runs in times.items()}
    cpus = {name: [c for _, c in runs] for name, runs in times.items()}
    floor = min(walls["python"]) if walls.get("python") else 0.0
    head = ("case", "min ms", "median ms", "min - python ms", "CPU min ms", "instr. M")
    rows: list[tuple[str, ...]] = [(*head, "target", "")]
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
                f"{instructions[name] / 1e6:,.1f}" if name in instructions else "",
                f"< {target:.0f} ms" if target is not None else "",
                verdict,
            )
        )
    for pair in (("mcpbind import", "official import"), ("mcpbind ls", "official ls")):
        if all(p in walls for p in pair):
            ratio = min(walls[pair[1]]) / min(walls[pair[0]])
            rows.append((f"{pair[0]} vs official", "", "", "", "", "", "", f"{ratio:.1f}x faster"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    if not instructions:  # the column only when counted
        rows = [r[:5] + r[6:] for r in rows]
        widths = widths[:5] + widths[6:]
    lines = [
        "  ".join(
            c.rjust(w) if 0 < i < 5 + bool(instructions) else c.ljust(w)
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
    parser.add_argument("--python", default=sys.executable, help="the interpreter to measure")
    parser.add_argument(
        "--instructions", action="store_true", help="also count instructions (valgrind)"
    )
    args = parser.parse_args(argv)
    if args.runs is None:
        args.runs = 2 if args.quick else 10
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind")
    env = child_env(args.python)
    installed, available = describe(args.python, env)
    times = run(args, env, available)
    instructions = {}
    if args.instructions:
        chosen = [c for c in cases(args.python) if c.name in times]
        instructions = {c.name: count_instructions(c, args.timeout * 50, env) for c in chosen}
    table, ok = report(times, instructions)
    version = subprocess.run(
        [args.python, "-c", "import sys; print(sys.version.split()[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print(f"cold start: python {version}, {args.runs} runs per case, wall time; {installed}")
    print(table)
    if args.json:
        args.json.write_text(json.dumps(times, indent=2) + "\n")
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
