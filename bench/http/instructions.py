"""Server instructions per ``tools/call`` over Streamable HTTP, counted under callgrind.

Load-independent where ``run.py``'s req/s is not: each Python server configuration of
``run.py`` is started under ``valgrind --tool=callgrind`` (all its threads, the ``def`` tool
pool's too), the load generator makes a fixed number of calls per client (``loadgen.mjs
--calls``), the server is stopped and its total read. Two runs (``--calls A,B``) give the cost
of the calls beyond start-up, session set-up and shutdown. (The Node servers are left out:
under callgrind the TS SDK's first calls outlast the load generator's 30 s timeouts.)::

    instructions per request = (total(B) - total(A)) / ((B - A) * clients)

Under callgrind the server is about 50x slower, so with 10 clients requests queue up as at
a saturated server (the regime of the 10- and 50-client rows).

    python bench/http/instructions.py --only 'mcpbind def [uvicorn uvloop+httptools]'
    python bench/http/instructions.py --only 'mcpbind def*' --clients 10 --calls 20,120
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import LOADGEN_DIR, BenchError, Target, _node_binary, running, select_targets

#: How much slower a server runs under callgrind (start-up and stop deadlines scale by it).
SLOW = 20.0


def _total(out: Path) -> int:
    match = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
    if match is None:
        raise BenchError(f"no instruction total in {out}")
    return int(match.group(1))


def count(target: Target, node: str, clients: int, calls: int, verbose: bool) -> int:
    """Instructions the server executes from start to stop, serving ``calls`` per client."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        wrap = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        with running(target, node, None, verbose, wrap, SLOW) as server:
            cmd = [node, str(LOADGEN_DIR / "loadgen.mjs"), "--url", server.url]
            cmd += ["--clients", str(clients), "--calls", str(calls)]
            cmd += ["--protocol-version", target.protocol]
            cmd += ["--sessionless"] if target.sessionless else []
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
            if done.returncode != 0:
                raise BenchError(f"{target.key}: load generator failed: {done.stderr.strip()}")
        return _total(out)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", required=True, help="run.py's --only (Python servers)")
    parser.add_argument("--clients", type=int, default=10, help="concurrent sessions (10)")
    parser.add_argument("--calls", default="20,120", help="calls per client, two runs (20,120)")
    parser.add_argument("--node", help="node binary (default: the loadgen's, else PATH)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every command")
    args = parser.parse_args(argv)
    args.extras = True
    low, high = (int(v) for v in args.calls.split(","))
    if not 0 < low < high:
        parser.error("--calls A,B with 0 < A < B")
    args.low, args.high = low, high
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    node = _node_binary(args.node)
    if node is None or shutil.which("valgrind") is None:
        print("error: needs node and valgrind", file=sys.stderr)
        return 2
    chosen = [t for t in select_targets(args) if t.runs_on != "node"]
    print(f"server instructions per tools/call, {args.clients} clients, calls {args.calls}")
    for target in chosen:
        if (reason := target.available()) is not None:
            print(f"skipped {target.key}: {reason}")
            continue
        try:
            low = count(target, node, args.clients, args.low, args.verbose)
            high = count(target, node, args.clients, args.high, args.verbose)
        except BenchError as exc:
            print(f"FAILED {target.key}: {exc}")
            continue
        per = (high - low) / ((args.high - args.low) * args.clients)
        print(f"{target.key}: {per:,.0f} instructions per request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
