"""Run the official MCP conformance suite (pinned in conformance/package.json) against mcpbind.

    python conformance/run.py server --spec-version 2025-11-25
    python conformance/run.py server --spec-version 2025-11-25,2026-07-28   # one server, both wires
    python conformance/run.py client --command "python conformance/everything_client.py" \
        --spec-version 2025-11-25

``--spec-version`` takes a comma-separated list (``extension`` names the scenarios of
the official extensions, ``[extension]`` in ``conformance list``, which belong to no spec
version and run without ``--spec-version``): the server side then runs every version
against the same everything-server process (one endpoint serving both protocol eras), the
client side runs the same ``--command`` once per version; one report per version, exit 1 if
any version fails.

``server`` starts the everything-server (conformance/everything_server.py) on a free
127.0.0.1 port (or tests ``--url``), runs every server scenario of the version (the suite's
"all", so pending scenarios such as ``server-sse-polling`` run too) and stops the server by its
PID. ``client`` runs every client scenario against ``--command``; a timing-sensitive scenario
that fails is run once more on its own before it counts.

Each scenario is one run of the suite (``--scenario``, ``--jobs`` at a time), and its verdict
is the suite's own: its exit status (a client that exits non-zero or times out fails, as the
suite says), its checks as the suite counts them (a warning fails a client scenario, and is
reported on a server scenario, where the suite does not count it), a scenario whose checks are
all skipped is SKIP with the suite's reason (never PASS), and one without a single passed check
is NONE (no evidence: never PASS). Prints one line per scenario (PASS, FAIL, WARN, SKIP, NONE,
XFAIL) and a total of each. Exits 1 on any scenario that did not pass and is not in the
expected-failures file (a skip too: it stands there with its reason), on any stale entry (it
passed, or it no longer exists), and when a scenario the suite lists produced no result. The
harness's mock servers are made to bind 127.0.0.1 only (bind-loopback.cjs, preloaded through
NODE_OPTIONS).
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
BIN = HERE / "node_modules" / ".bin"
NODE_BIN = HERE / "node" / "node_modules" / ".bin"  # the pinned Node.js 24 (node/package.json)
PRELOAD = HERE / "bind-loopback.cjs"
EXPECTED = HERE / "expected-failures.yml"
TIMING_SENSITIVE = ("sse-retry",)
_LISTED = re.compile(r"^\s+- (\S+) \[([^\]]*)\]")
_NOT_APPLICABLE = re.compile(r"^SKIPPED: (scenario .*)$", re.MULTILINE)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join((str(NODE_BIN), str(BIN), env.get("PATH", "")))
    env["NODE_OPTIONS"] = f"{env.get('NODE_OPTIONS', '')} --require {PRELOAD}".strip()
    return env


def _suite(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    exe = BIN / "conformance"
    for needed in (NODE_BIN / "node", exe):
        if not needed.exists():
            sys.exit(f"{needed} is missing: run `make conformance/node_modules/.installed` first")
    return subprocess.run(
        [str(exe), *args],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def read_expected(path: Path) -> dict[str, set[str]]:
    """The baseline: ``server:``/``client:`` lists of ``- scenario  # why`` (the suite's YAML
    format, read without a YAML dependency)."""
    sections: dict[str, set[str]] = {"server": set(), "client": set()}
    current: str | None = None
    if not path.exists():
        return sections
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not line.startswith((" ", "-")) and line.endswith((":", ": []")):
            current = line.removesuffix(" []").removesuffix(":").strip()
            sections.setdefault(current, set())
        elif line.lstrip().startswith("- ") and current is not None:
            sections[current].add(line.lstrip()[2:].strip().strip("'\""))
        else:
            sys.exit(f"{path}: cannot read line {raw!r}")
    return sections


EXTENSION = "extension"


def _version_args(spec_version: str | None) -> list[str]:
    """``--spec-version V``; nothing for extension scenarios (they are on no timeline)."""
    return ["--spec-version", spec_version] if spec_version and spec_version != EXTENSION else []


def listed(side: str, spec_version: str | None) -> list[str]:
    """The suite's scenarios of a version (``None``: of every version it knows;
    ``extension``: the extension scenarios)."""
    out = _suite("list", f"--{side}", *_version_args(spec_version), timeout=120)
    names = []
    in_side = False
    for line in out.stdout.splitlines():
        if line.lower().startswith(f"{side} scenarios"):
            in_side = True
        elif line and not line.startswith(" "):
            in_side = False
        elif (
            in_side
            and (m := _LISTED.match(line))
            and (spec_version != EXTENSION or m.group(2) == EXTENSION)
        ):
            names.append(m.group(1))
    if not names:
        sys.exit(f"conformance list printed no {side} scenarios:\n{out.stdout}{out.stderr}")
    return names


class Outcome(NamedTuple):
    """One scenario run by the suite: its exit status, the checks it saved (checks.json),
    and the suite's own "not applicable" skip line, if it printed one."""

    status: int
    checks: list[dict[str, Any]]
    skipped: str | None = None
    output: str = ""


class Verdict(NamedTuple):
    """What an ``Outcome`` means, as the suite counts it: ``kind`` PASS, FAIL, WARN, SKIP or
    NONE (no check passed: no evidence); ``ok``: the scenario passed in the suite's words (a
    server scenario with a warning does, a client one does not)."""

    kind: str
    detail: str
    ok: bool = False


def judge(side: str, outcome: Outcome, null: Outcome | None = None) -> Verdict:
    """The suite's verdict on one scenario run alone. The suite fails a client scenario on a
    FAILURE or WARNING check, on a timeout and on a non-zero client exit (its ``OVERALL``),
    a server scenario on a FAILURE check (warnings are printed, not counted); its exit status
    says which. With the exit status 0, checks that are all SKIPPED make a SKIP (with the
    suite's reason). A scenario that would pass is NONE (no evidence) when no check passed
    that ``null`` (the same scenario against a peer that does nothing) did not pass too."""
    if outcome.skipped is not None:
        return Verdict("SKIP", f"the suite skipped it: {outcome.skipped}")
    passed, failed, warned, skipped = (_count(outcome, k) for k in _STATUSES)
    detail = f"{passed} checks passed, {failed} failed, {warned} warnings" + (
        f", {skipped} skipped" if skipped else ""
    )
    if outcome.status != 0:
        detail += f"; the suite exited {outcome.status}" + _suite_said(outcome.output)
    if skipped and not (passed or failed or warned) and outcome.status == 0:
        reasons = sorted(
            {
                str(c.get("errorMessage") or c.get("description") or c.get("id"))
                for c in outcome.checks
                if c.get("status") == "SKIPPED"
            }
        )
        more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
        return Verdict("SKIP", f"{detail}: {reasons[0]}{more}")
    if failed:
        return Verdict("FAIL", detail)
    if warned and side == "client":
        return Verdict("WARN", f"{detail} (the suite fails a client scenario on a warning)")
    if outcome.status != 0:
        return Verdict("FAIL", detail)
    evidence = _succeeded(outcome) - (_succeeded(null) if null is not None else set())
    if not evidence:
        nothing = "" if null is None else " that a peer doing nothing does not pass as well"
        return Verdict("NONE", f"{detail}: no check passed{nothing}, no evidence")
    if warned:
        return Verdict("WARN", f"{detail} (the suite does not count warnings on a server)", ok=True)
    return Verdict("PASS", detail, ok=True)


_STATUSES = ("SUCCESS", "FAILURE", "WARNING", "SKIPPED")


def _count(outcome: Outcome, status: str) -> int:
    return sum(c.get("status") == status for c in outcome.checks)


def _succeeded(outcome: Outcome) -> set[str]:
    return {str(c.get("id")) for c in outcome.checks if c.get("status") == "SUCCESS"}


def _suite_said(output: str) -> str:
    """The suite's own reason for a failing exit status, if it printed one."""
    for line in output.splitlines():
        if "CLIENT EXITED WITH ERROR" in line or "CLIENT TIMED OUT" in line:
            return f" ({line.strip(' ⚠️')})"
    return ""


def _outcome(proc: subprocess.CompletedProcess[str], outdir: Path) -> Outcome:
    checks: list[dict[str, Any]] = []
    for f in sorted(outdir.rglob("checks.json")):
        loaded = json.loads(f.read_text())
        checks.extend(c for c in loaded if isinstance(c, dict))
    output = f"{proc.stdout}\n{proc.stderr}"
    skipped = _NOT_APPLICABLE.search(output)
    return Outcome(
        proc.returncode, checks, skipped.group(1) if skipped and not checks else None, output
    )


def run_one(
    side: str,
    scenario: str,
    target: list[str],
    spec_version: str | None,
    verbose: bool = False,
    timeout: float = 900,
) -> Outcome:
    """One scenario, alone: ``target`` is ``--url URL`` or ``--command CMD --timeout MS``."""
    with tempfile.TemporaryDirectory() as out:
        proc = _suite(
            side,
            *target,
            "--scenario",
            scenario,
            *_version_args(spec_version),
            "-o",
            out,
            timeout=timeout,
        )
        if verbose:
            print(proc.stdout, proc.stderr, sep="\n")
        return _outcome(proc, Path(out))


def run_all(names: Iterable[str], one: Callable[[str], Outcome], jobs: int) -> dict[str, Outcome]:
    """Every scenario, ``jobs`` suite runs at a time."""
    names = list(names)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return dict(zip(names, pool.map(one, names), strict=True))


def report(
    side: str,
    names: list[str],
    results: dict[str, Outcome],
    expected: set[str],
    version: str = "",
    all_names: set[str] | None = None,
    nulls: dict[str, Outcome] | None = None,
) -> int:
    """Print the verdicts and a total of each; ``all_names``: every scenario the suite knows
    (an expected-failure entry not run here is stale only if it is none of them); ``nulls``:
    the scenarios run against a peer that does nothing (:func:`judge`)."""
    tally = dict.fromkeys(("PASS", "FAIL", "WARN", "SKIP", "NONE", "XFAIL"), 0)
    unexpected = stale = 0
    for name in names:
        got = results.get(name)
        null = (nulls or {}).get(name)
        verdict = Verdict("FAIL", "no result") if got is None else judge(side, got, null)
        tally[verdict.kind] += 1
        kind, detail = verdict.kind, verdict.detail
        if verdict.ok and name in expected:
            kind = "FAIL"
            detail += " (passes but is listed in expected-failures: remove the entry)"
            stale += 1
        elif not verdict.ok and name in expected:
            kind = "XFAIL"
            tally["XFAIL"] += 1
            detail = f"{verdict.kind}: {detail}"
        elif not verdict.ok:
            unexpected += 1
        print(f"{kind:5} {side} {name}: {detail}")
    for name in sorted(expected - set(names)):
        if all_names is not None and name in all_names:
            continue  # a scenario of another spec version
        print(f"FAIL  {side} {name}: listed in expected-failures but not a suite scenario")
        stale += 1
    wire = f" {version}" if version else ""
    print(
        f"TOTAL {side}{wire}: {len(names)} scenarios, {tally['PASS']} passed, {tally['FAIL']} failed, "
        f"{tally['WARN']} warned, {tally['SKIP']} skipped, {tally['NONE']} without a passed check; "
        f"{tally['XFAIL']} of these expected (expected-failures), {unexpected} unexpected, "
        f"{stale} stale expected-failure entries"
    )
    return 1 if unexpected or stale else 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the everything-server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    sys.exit("the everything-server did not start listening in time")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


NULL_CLIENT = "true"
"""A client that does nothing (and exits 0): what passes with it proves nothing."""


class _NotFound(http.server.BaseHTTPRequestHandler):
    """A server that does nothing: 404 to every request."""

    def _not_found(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(404)
        self.send_header("content-length", "0")
        self.end_headers()

    do_GET = do_POST = do_DELETE = _not_found

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def null_server() -> Iterator[str]:
    """The URL of a server answering 404 to everything, on 127.0.0.1, for the block."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _passing(side: str, results: dict[str, Outcome]) -> list[str]:
    return [name for name, got in results.items() if judge(side, got).ok]


def run_server(args: argparse.Namespace, expected: set[str]) -> int:
    """Every version in ``--spec-version`` against ONE everything-server process (or
    against ``--url``)."""
    if args.url:
        return _server_versions(args, args.url, expected, None)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, str(HERE / "everything_server.py"), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=None if args.verbose else subprocess.DEVNULL,
    )
    try:
        _wait_port(port, server)
        return _server_versions(args, f"http://127.0.0.1:{port}/mcp", expected, server)
    finally:
        _stop(server)


def _server_versions(
    args: argparse.Namespace, url: str, expected: set[str], server: subprocess.Popen[bytes] | None
) -> int:
    status = 0
    where = f"server pid {server.pid}, {url}" if server is not None else url
    extensions = listed("server", EXTENSION)
    for version in args.versions:
        if args.scenario in extensions:
            break
        print(f"== server, spec version {version}, {where}")
        names = [args.scenario] if args.scenario else listed("server", version)
        results, nulls = _server_run(args, url, names, version)
        status |= report("server", names, results, expected, version, args.all_names, nulls)
        if server is not None and server.poll() is not None:
            sys.exit(f"the everything-server exited with {server.returncode}")
    if not args.scenario or args.scenario in extensions:
        # The [extension] scenarios (tasks, ...): not on the spec timeline, so the suite runs
        # them only by name, without --spec-version.
        print(f"== server, extension scenarios, {where}")
        names = [args.scenario] if args.scenario else extensions
        results, nulls = _server_run(args, url, names, None)
        status |= report("server", names, results, expected, "extensions", args.all_names, nulls)
    return status


def _server_run(
    args: argparse.Namespace, url: str, names: list[str], version: str | None
) -> tuple[dict[str, Outcome], dict[str, Outcome]]:
    """The scenarios against ``url``, and those that pass against the null server too."""
    results = run_all(
        names, lambda name: run_one("server", name, ["--url", url], version), args.jobs or 1
    )
    nulls: dict[str, Outcome] = {}
    if args.null_peer:
        with null_server() as stub:
            nulls = run_all(
                _passing("server", results),
                lambda name: run_one("server", name, ["--url", stub], version),
                args.jobs or 4,
            )
    if args.verbose:
        for got in results.values():
            print(got.output)
    return results, nulls


def run_client(args: argparse.Namespace, expected: set[str]) -> int:
    names = [args.scenario] if args.scenario else listed("client", args.spec_version)

    def with_command(command: str) -> Callable[[str], Outcome]:
        target = ["--command", command, "--timeout", str(args.client_timeout)]
        return lambda name: run_one("client", name, target, args.spec_version, args.verbose)

    one = with_command(args.command)
    results = run_all(names, one, args.jobs or 4)
    timing = set(args.retry or TIMING_SENSITIVE)
    for name in names:
        if name in timing and name not in expected and not judge("client", results[name]).ok:
            print(f"RETRY client {name}: failed among the parallel runs; running it on its own")
            results[name] = one(name)
    nulls: dict[str, Outcome] = {}
    if args.null_peer:
        nulls = run_all(_passing("client", results), with_command(NULL_CLIENT), args.jobs or 4)
    return report("client", names, results, expected, args.spec_version, args.all_names, nulls)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the MCP conformance suite on mcpbind.")
    parser.add_argument("side", choices=("server", "client"))
    parser.add_argument(
        "--spec-version",
        default="2025-11-25",
        help="a version, or several separated by commas (e.g. 2025-11-25,2026-07-28); "
        "'extension' for the extension scenarios",
    )
    parser.add_argument("--command", help="client command (client side)")
    parser.add_argument("--scenario", help="run only this scenario")
    parser.add_argument("--expected-failures", type=Path, default=EXPECTED)
    parser.add_argument(
        "--retry",
        action="append",
        metavar="SCENARIO",
        help=f"timing-sensitive client scenario to re-run alone on failure "
        f"(default: {', '.join(TIMING_SENSITIVE)})",
    )
    parser.add_argument(
        "--client-timeout",
        type=int,
        default=120_000,
        metavar="MS",
        help="per-scenario limit for the client command (scenarios run --jobs at a time, "
        "each a new process: a loaded 2-core machine needs more than the suite's 30 s)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="suite runs at a time, one scenario each (default: 4 client, 1 server)",
    )
    parser.add_argument("--url", help="server side: test this server instead of starting one")
    parser.add_argument(
        "--null-peer",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run each passing scenario against a peer that does nothing too (a client that "
        "exits 0, a server answering 404): a pass needs a check that peer does not pass",
    )
    parser.add_argument("--verbose", action="store_true", help="print the suite's own output")
    args = parser.parse_args(argv)
    expected = read_expected(args.expected_failures).get(args.side, set())
    if args.scenario:
        expected = expected & {args.scenario}  # other entries are not stale, just not run
    args.versions = [v.strip() for v in args.spec_version.split(",") if v.strip()]
    if not args.versions:
        parser.error("--spec-version needs at least one version")
    # An entry for a scenario of a version not run now is not stale; one the suite does not
    # know at all is.
    args.all_names = None if args.scenario else set(listed(args.side, None))
    if args.side == "client":
        if not args.command:
            parser.error("client needs --command")
        status = 0
        for version in args.versions:
            args.spec_version = version
            print(f"== client, spec version {version}, command {args.command!r}")
            status |= run_client(args, expected)
        return status
    return run_server(args, expected)


if __name__ == "__main__":
    sys.exit(main())
