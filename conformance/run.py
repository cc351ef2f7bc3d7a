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
127.0.0.1 port, runs every server scenario of the version (the suite's "all", so pending
scenarios such as ``server-sse-polling`` run too) and stops the server by its PID. ``client``
runs every client scenario against ``--command``; a timing-sensitive scenario that fails (the
suite runs client scenarios in parallel) is run once more on its own before it counts.

Prints one line per scenario (PASS, FAIL, XFAIL) and a total. Exits 1 on any unexpected
failure, on any stale entry of the expected-failures file (it passed, or it no longer exists),
and when a scenario the suite lists produced no result. The harness's mock servers are made to
bind 127.0.0.1 only (bind-loopback.cjs, preloaded through NODE_OPTIONS).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = HERE / "node_modules" / ".bin"
PRELOAD = HERE / "bind-loopback.cjs"
EXPECTED = HERE / "expected-failures.yml"
TIMING_SENSITIVE = ("sse-retry",)
_SUMMARY = re.compile(r"^[✓✗]\s+(\S+): (\d+) passed, (\d+) failed(?:, (\d+) warnings)?")
_LISTED = re.compile(r"^\s+- (\S+) \[([^\]]*)\]")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["NODE_OPTIONS"] = f"{env.get('NODE_OPTIONS', '')} --require {PRELOAD}".strip()
    return env


def _suite(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    exe = BIN / "conformance"
    if not exe.exists():
        sys.exit(f"{exe} is missing: run `npm ci --prefix {HERE}` first")
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


def summary(stdout: str) -> dict[str, tuple[int, int, int]]:
    """scenario -> (passed, failed, warnings) from the suite's SUMMARY lines."""
    results = {}
    for line in stdout.splitlines():
        if m := _SUMMARY.match(line.strip()):
            results[m.group(1)] = (int(m.group(2)), int(m.group(3)), int(m.group(4) or 0))
    return results


def _checks_failed(outdir: Path) -> tuple[int, int] | None:
    """(passed, failed) over every checks.json under ``outdir`` (a single-scenario run)."""
    files = list(outdir.rglob("checks.json"))
    if not files:
        return None
    passed = failed = 0
    for f in files:
        for check in json.loads(f.read_text()):
            passed += check.get("status") == "SUCCESS"
            failed += check.get("status") == "FAILURE"
    return passed, failed


def report(
    side: str,
    names: list[str],
    results: dict[str, tuple[int, int, int]],
    expected: set[str],
    version: str = "",
    all_names: set[str] | None = None,
) -> int:
    """Print the verdicts; ``all_names``: every scenario the suite knows (an expected-failure
    entry not run here is stale only if it is none of them)."""
    unexpected = stale = xfail = passed = 0
    for name in names:
        got = results.get(name)
        if got is None:
            verdict, detail = ("XFAIL" if name in expected else "FAIL"), "no result"
        else:
            ok = got[1] == 0
            detail = f"{got[0]} checks passed, {got[1]} failed" + (
                f", {got[2]} warnings" if got[2] else ""
            )
            if ok and name in expected:
                verdict = "FAIL"
                detail += " (passes but is listed in expected-failures: remove the entry)"
                stale += 1
            elif ok:
                verdict = "PASS"
            elif name in expected:
                verdict = "XFAIL"
            else:
                verdict = "FAIL"
        if verdict == "FAIL" and "remove the entry" not in detail:
            unexpected += 1
        passed += verdict == "PASS"
        xfail += verdict == "XFAIL"
        print(f"{verdict:5} {side} {name}: {detail}")
    for name in sorted(expected - set(names)):
        if all_names is not None and name in all_names:
            continue  # a scenario of another spec version
        print(f"FAIL  {side} {name}: listed in expected-failures but not a suite scenario")
        stale += 1
    wire = f" {version}" if version else ""
    print(
        f"TOTAL {side}{wire}: {len(names)} scenarios, {passed} passed, {xfail} expected failures, "
        f"{unexpected} unexpected failures, {stale} stale expected-failure entries"
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


def run_server(args: argparse.Namespace, expected: set[str]) -> int:
    """Every version in ``--spec-version`` against ONE everything-server process."""
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, str(HERE / "everything_server.py"), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=None if args.verbose else subprocess.DEVNULL,
    )
    status = 0
    try:
        _wait_port(port, server)
        url = f"http://127.0.0.1:{port}/mcp"
        extensions = listed("server", EXTENSION)
        for version in args.versions:
            if args.scenario in extensions:
                break
            print(f"== server, spec version {version}, server pid {server.pid}, {url}")
            status |= _server_version(args, url, version, expected)
            if server.poll() is not None:
                sys.exit(f"the everything-server exited with {server.returncode}")
        if not args.scenario or args.scenario in extensions:
            print(f"== server, extension scenarios, server pid {server.pid}, {url}")
            status |= _server_extensions(args, url, extensions, expected)
    finally:
        _stop(server)
    return status


def _server_version(args: argparse.Namespace, url: str, version: str, expected: set[str]) -> int:
    names = [args.scenario] if args.scenario else listed("server", version)
    results: dict[str, tuple[int, int, int]] = {}
    with tempfile.TemporaryDirectory() as out:
        base = ["server", "--url", url, "--spec-version", version, "-o", out]
        if args.scenario:
            proc = _suite(*base, "--scenario", args.scenario)
            got = _checks_failed(Path(out))
            if got is not None:
                results[args.scenario] = (*got, 0)
        else:
            proc = _suite(*base, "--suite", "all")
            results = summary(proc.stdout)
    if args.verbose:
        print(proc.stdout, proc.stderr, sep="\n")
    return report("server", names, results, expected, version, args.all_names)


def _server_extensions(
    args: argparse.Namespace, url: str, extensions: list[str], expected: set[str]
) -> int:
    """The ``[extension]`` scenarios (tasks, ...): not on the spec timeline, so the suite runs
    them only by name, without ``--spec-version``; one run each."""
    names = [args.scenario] if args.scenario else extensions
    results: dict[str, tuple[int, int, int]] = {}
    for name in names:
        with tempfile.TemporaryDirectory() as out:
            proc = _suite("server", "--url", url, "--scenario", name, "-o", out)
            got = _checks_failed(Path(out))
        if got is not None:
            results[name] = (*got, 0)
        if args.verbose:
            print(proc.stdout, proc.stderr, sep="\n")
    return report("server", names, results, expected, "extensions", args.all_names)


def _client_once(args: argparse.Namespace, scenario: str) -> tuple[int, int, int] | None:
    with tempfile.TemporaryDirectory() as out:
        proc = _suite(
            "client",
            "--command",
            args.command,
            "--scenario",
            scenario,
            "--timeout",
            str(args.client_timeout),
            *_version_args(args.spec_version),
            "-o",
            out,
        )
        if args.verbose:
            print(proc.stdout, proc.stderr, sep="\n")
        got = _checks_failed(Path(out))
    return None if got is None else (*got, 0)


def run_client(args: argparse.Namespace, expected: set[str]) -> int:
    if args.scenario:
        names = [args.scenario]
        got = _client_once(args, args.scenario)
        results = {} if got is None else {args.scenario: got}
    else:
        names = listed("client", args.spec_version)
        with tempfile.TemporaryDirectory() as out:
            proc = _suite(
                "client",
                "--command",
                args.command,
                "--suite",
                "extensions" if args.spec_version == EXTENSION else "all",
                "--timeout",
                str(args.client_timeout),
                *_version_args(args.spec_version),
                "-o",
                out,
            )
        if args.verbose:
            print(proc.stdout, proc.stderr, sep="\n")
        results = summary(proc.stdout)
    timing = set(args.retry or TIMING_SENSITIVE)
    for name in names:
        got = results.get(name)
        if name in timing and name not in expected and (got is None or got[1] > 0):
            print(f"RETRY client {name}: failed in the parallel run; running it on its own")
            again = _client_once(args, name)
            if again is not None:
                results[name] = again
    return report("client", names, results, expected, args.spec_version, args.all_names)


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
        help="per-scenario limit for the client command (the suite runs them all in parallel, "
        "each a new process: a loaded 2-core machine needs more than the suite's 30 s)",
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
