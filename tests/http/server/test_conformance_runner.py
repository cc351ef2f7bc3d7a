"""conformance/run.py's verdicts: one line per scenario, a total, and exit 1 on an unexpected
failure, on a stale expected-failure entry and on a scenario without a result."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

RUN = Path(__file__).resolve().parents[3] / "conformance" / "run.py"


@pytest.fixture(scope="module")
def run() -> ModuleType:
    spec = importlib.util.spec_from_file_location("conformance_run", RUN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_expected_failures_file_lists_only_the_suite_skip(run: ModuleType) -> None:
    """Nothing may fail: the client implements authorization, so its section is empty too.
    The one entry is the scenario the suite itself skips (no check runs), with its reason.

    Spec: issue 4 §Conformance suite in CI; issue 10 "What it must show" 1; issue 34.
    """
    expected = {"server": {"tasks-status-notifications"}, "client": set()}
    assert run.read_expected(run.EXPECTED) == expected
    assert "pending subscriptions/listen rewrite" in run.EXPECTED.read_text()


def test_extension_scenarios_are_listed_and_run_without_a_spec_version(
    run: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``extension`` picks the ``[extension]`` scenarios of ``conformance list`` and runs
    them with no ``--spec-version`` (they are on no spec timeline).

    Spec: issue 10 "What it must show" 1 (run.py must run extension scenarios).
    """
    import subprocess

    listing = (
        "Client scenarios (test against a client):\n"
        "  - initialize [2025-06-18,2025-11-25]\n"
        "  - auth/dpop [extension]\n"
        "  - auth/wif-jwt-bearer [extension]\n"
    )
    calls: list[tuple[str, ...]] = []

    def suite(*args: str, **_: object) -> subprocess.CompletedProcess[str]:
        calls.append(args)
        return subprocess.CompletedProcess(args, 0, listing, "")

    monkeypatch.setattr(run, "_suite", suite)
    assert run.listed("client", "extension") == ["auth/dpop", "auth/wif-jwt-bearer"]
    assert calls[-1] == ("list", "--client")
    assert run.listed("client", "2025-11-25")[0] == "initialize"
    assert calls[-1] == ("list", "--client", "--spec-version", "2025-11-25")


def _checks(*statuses: str) -> list[dict[str, str]]:
    return [{"id": f"check-{i}", "status": status} for i, status in enumerate(statuses)]


def test_verdicts_are_the_suites_own(run: ModuleType) -> None:
    """A scenario passes only as the suite says: its exit status (a client exiting non-zero
    fails), a warning failing a client scenario and not a server one, all-skipped checks a
    SKIP, no passed check (or none a do-nothing peer does not pass too) NONE.

    Spec: issue 34 "What to build" 1.
    """
    out = run.Outcome
    assert run.judge("client", out(0, _checks("SUCCESS"))).kind == "PASS"
    assert run.judge("client", out(1, _checks("SUCCESS"))).kind == "FAIL"  # exited non-zero
    assert run.judge("client", out(1, _checks("SUCCESS", "WARNING"))).kind == "WARN"
    assert not run.judge("client", out(1, _checks("SUCCESS", "WARNING"))).ok
    assert run.judge("server", out(0, _checks("SUCCESS", "WARNING"))).ok  # as the suite counts
    assert run.judge("server", out(1, _checks("SUCCESS", "FAILURE"))).kind == "FAIL"
    assert run.judge("server", out(0, _checks("SKIPPED"))).kind == "SKIP"
    assert run.judge("client", out(1, _checks("SKIPPED"))).kind == "FAIL"
    assert run.judge("client", out(0, [], "scenario 'x' is not applicable")).kind == "SKIP"
    assert run.judge("client", out(0, [])).kind == "NONE"
    assert run.judge("client", out(0, _checks("INFO", "SKIPPED", "SUCCESS"))).ok
    null = out(0, _checks("SUCCESS"))
    assert run.judge("client", out(0, _checks("SUCCESS")), null).kind == "NONE"
    assert run.judge("client", out(0, _checks("SUCCESS", "SUCCESS")), null).ok


def test_report_totals_and_expected_failures(
    run: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """One line per scenario, a total of each verdict; an expected failure (a skip too) does
    not fail the run, an unexpected one, a stale entry and a missing result do.

    Spec: issue 4 §Conformance suite in CI; issue 34 "What to build" 1.
    """
    results = {
        "a": run.Outcome(0, _checks("SUCCESS", "SUCCESS")),
        "b": run.Outcome(1, _checks("SUCCESS", "FAILURE")),
        "c": run.Outcome(1, _checks("SUCCESS", "WARNING")),
        "s": run.Outcome(0, [{"id": "s", "status": "SKIPPED", "errorMessage": "Skipped: why"}]),
    }
    assert run.report("client", ["a", "c", "s"], results, {"c", "s"}) == 0
    assert run.report("client", ["a", "s"], results, set()) == 1  # a skip is no pass
    assert run.report("client", ["a", "b"], results, set()) == 1  # unexpected failure
    assert run.report("client", ["a"], results, {"a"}) == 1  # stale: passes but listed
    assert run.report("client", ["a"], results, {"gone"}) == 1  # stale: not a scenario
    # An entry for a scenario of another spec version (not run now) is not stale; one the
    # suite does not know at all still is.
    assert run.report("client", ["a"], results, {"other"}, "v1", {"a", "other"}) == 0
    assert run.report("client", ["a"], results, {"gone"}, "v1", {"a", "other"}) == 1
    assert run.report("client", ["a", "d"], results, set()) == 1  # no result at all
    lines = capsys.readouterr().out.splitlines()
    assert "PASS  client a: 2 checks passed, 0 failed, 0 warnings" in lines
    assert any(line.startswith("XFAIL client c: WARN: 1 checks passed") for line in lines)
    assert (
        "XFAIL client s: SKIP: 0 checks passed, 0 failed, 0 warnings, 1 skipped: Skipped: why"
        in lines
    )
    assert any(line.startswith("SKIP  client s:") for line in lines)
    assert (
        "TOTAL client: 3 scenarios, 1 passed, 0 failed, 1 warned, 1 skipped, 0 without a passed "
        "check; 2 of these expected (expected-failures), 0 unexpected, 0 stale expected-failure "
        "entries"
    ) in lines


def test_bind_loopback_preload(run: ModuleType) -> None:
    """bind-loopback.cjs: a Node server listening without a host binds 127.0.0.1, at once
    (address() right after listen(), as the harness's mock servers read it); an explicit
    host is left alone.

    Spec: 2025-11-25 basic/transports.mdx §Security Warning 2 (bind to localhost).
    """
    import json
    import subprocess

    node = run.NODE_BIN / "node"
    if not node.exists():
        pytest.skip("the pinned Node is not installed (make conformance/node_modules/.installed)")
    script = (
        "const net = require('net');"
        "const a = net.createServer().listen(0); const b = net.createServer().listen({port: 0});"
        "const out = [a.address(), b.address()]; a.close(); b.close();"
        "const c = net.createServer().listen(0, '::1', () => {"
        " out.push(c.address()); c.close(); console.log(JSON.stringify(out)); });"
    )
    proc = subprocess.run(
        [str(node), "-e", script], env=run._env(), capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    a, b, c = json.loads(proc.stdout)
    assert a["address"] == b["address"] == "127.0.0.1"
    assert c["address"] == "::1"


def test_suite_is_installed_with_the_pinned_node_without_engine_warnings(
    run: ModuleType, tmp_path: Path
) -> None:
    """The suite needs Node >= 22 (a dependency's ``engines``), whatever Node the machine
    has: the Makefile installs it with npm running on the pinned Node 24 (conformance/node),
    so npm checks the engine ranges against that Node and prints no ``EBADENGINE`` warning.
    An ``npm ci --dry-run`` of the pinned lock file, offline, checks what the real one would.

    Spec: issue 31, "Still missing" (``npm warn EBADENGINE`` during ``make check``).
    """
    import os
    import shutil
    import subprocess

    npm = shutil.which("npm")
    if npm is None or not (run.NODE_BIN / "node").exists():
        pytest.skip("the pinned Node is not installed (make conformance/node_modules/.installed)")
    root = run.HERE.parent
    recipe = subprocess.run(
        ["make", "-n", "-B", "-C", str(root), "conformance/node_modules/.installed"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    assert f'PATH="{run.NODE_BIN}:$PATH" npm ci --prefix conformance ' in recipe
    for name in ("package.json", "package-lock.json"):
        shutil.copy(run.HERE / name, tmp_path / name)
    env = dict(os.environ, PATH=f"{run.NODE_BIN}{os.pathsep}{os.environ['PATH']}")
    dry_run = ["ci", "--dry-run", "--offline", "--no-audit", "--no-fund"]
    proc = subprocess.run(
        [npm, *dry_run, "--cache", str(tmp_path / "cache"), "--prefix", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "add @modelcontextprotocol/conformance" in proc.stdout
    assert "EBADENGINE" not in proc.stdout + proc.stderr
    assert not (tmp_path / "node_modules").exists()  # a dry run: nothing installed


def test_timing_sensitive_client_scenario_is_rerun_once_alone(
    run: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Client scenarios run several at a time: a failed ``sse-retry`` is run once more on its
    own and its second result counts; other failures are not retried, and a retry that fails
    again is a failure.

    Spec: issue 4 §Conformance suite in CI.
    """
    import argparse

    monkeypatch.setattr(run, "listed", lambda side, version: ["initialize", "sse-retry"])
    good, bad = run.Outcome(0, _checks("SUCCESS")), run.Outcome(1, _checks("FAILURE"))
    initialize, second = [good], [good]
    calls: list[str] = []

    def one(side: str, name: str, *rest: object) -> object:
        calls.append(name)
        if name == "sse-retry":
            return bad if calls.count(name) == 1 else second[0]
        return initialize[0]

    monkeypatch.setattr(run, "run_one", one)
    args = argparse.Namespace(
        command="client",
        spec_version="2025-11-25",
        scenario=None,
        retry=None,
        verbose=False,
        all_names=None,
        client_timeout=120_000,
        jobs=None,
        null_peer=False,
    )
    assert run.run_client(args, set()) == 0
    assert sorted(calls) == ["initialize", "sse-retry", "sse-retry"]
    out = capsys.readouterr().out
    assert "RETRY client sse-retry" in out and "PASS  client sse-retry: 1 checks passed" in out

    second[0] = bad  # fails alone too: a real failure
    calls.clear()
    assert run.run_client(args, set()) == 1
    assert calls.count("sse-retry") == 2
    assert "FAIL  client sse-retry" in capsys.readouterr().out

    initialize[0] = bad  # not timing-sensitive: never retried
    calls.clear()
    assert run.run_client(args, set()) == 1
    assert calls.count("initialize") == 1


# The runner against the real suite (the pinned Node package): peers that do nothing, or do
# their work and then fail, are reported as what they are.

_WARNING_CLIENT = """
import json, sys, urllib.request, urllib.error
meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "no-retry", "version": "1"},
}
body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
request = urllib.request.Request(
    sys.argv[-1],
    json.dumps(body).encode(),
    {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
    },
)
try:
    urllib.request.urlopen(request, timeout=30).read()
except urllib.error.HTTPError as refused:  # -32022: this client does not retry
    refused.read()
"""


@pytest.fixture
def suite(run: ModuleType) -> ModuleType:
    if not (run.BIN / "conformance").exists():
        pytest.skip(
            "the conformance suite is not installed (make conformance/node_modules/.installed)"
        )
    return run


def _main(run: ModuleType, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = run.main([*argv, "--expected-failures", "/nonexistent"])
    return status, capsys.readouterr().out


def test_no_op_client_is_no_pass(suite: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    """A client that does nothing is never reported PASS: ``true`` on initialize has no
    check (NONE); ``false`` on auth/resource-mismatch passes the suite's only check, which
    a do-nothing client passes too (NONE); ``false`` on http-standard-headers, every check
    skipped, fails by the suite's exit status.

    Spec: issue 34 (no evidence behind seven results).
    """
    status, out = _main(suite, capsys, "client", "--command", "true", "--scenario", "initialize")
    assert status == 1
    assert "NONE  client initialize: 0 checks passed" in out
    for scenario, verdict in (
        ("auth/resource-mismatch", "NONE"),
        ("http-standard-headers", "FAIL"),
    ):
        status, out = _main(
            suite,
            capsys,
            "client",
            "--command",
            "false",
            "--scenario",
            scenario,
            "--spec-version",
            "2026-07-28",
        )
        assert status == 1
        assert f"{verdict:5} client {scenario}:" in out, out


def test_client_exiting_non_zero_after_its_work_fails(
    suite: ModuleType, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The everything-client passes initialize; the same client exiting 3 afterwards fails,
    as the suite says (CLIENT EXITED WITH ERROR).

    Spec: issue 34 (a client that does its work and then exits 3 is reported PASS).
    """
    import shlex
    import sys

    client = suite.HERE / "everything_client.py"
    wrapper = tmp_path / "exit3.sh"
    wrapper.write_text(f'#!/bin/sh\n{shlex.quote(sys.executable)} {client} "$@"\nexit 3\n')
    wrapper.chmod(0o755)
    status, out = _main(
        suite, capsys, "client", "--command", str(wrapper), "--scenario", "initialize"
    )
    assert status == 1
    assert (
        "FAIL  client initialize: 1 checks passed, 0 failed, 0 warnings; the suite exited 1" in out
    )
    assert "CLIENT EXITED WITH ERROR (code 3)" in out
    assert "TOTAL client 2025-11-25: 1 scenarios, 0 passed, 1 failed," in out


def test_warning_is_reported_as_a_warning(
    suite: ModuleType, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A client that does not retry after -32022 gets the suite's warning on
    request-metadata (the suite's verdict: FAILED): WARN, counted as warned, exit 1.

    Spec: issue 34 (request-metadata reported PASS with 1 warning).
    """
    import sys

    script = tmp_path / "no_retry.py"
    script.write_text(_WARNING_CLIENT)
    status, out = _main(
        suite,
        capsys,
        "client",
        "--command",
        f"{sys.executable} {script}",
        "--scenario",
        "request-metadata",
        "--spec-version",
        "2026-07-28",
    )
    assert status == 1
    assert "WARN  client request-metadata:" in out and "1 warnings" in out
    assert ", 0 passed, 0 failed, 1 warned, 0 skipped," in out


def test_suite_skipped_scenario_is_a_skip(
    suite: ModuleType, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """tasks-status-notifications, which the suite skips (pending its subscriptions/listen
    rewrite), is SKIP with the suite's reason and fails the run unless the expected-failures
    file lists it; input-required-result-validate-input against a server answering 404 to
    everything is no pass either.

    Spec: issue 34 (a skipped scenario counted as passed).
    """
    with suite.null_server() as url:
        status, out = _main(
            suite, capsys, "server", "--url", url, "--scenario", "tasks-status-notifications"
        )
        assert status == 1
        assert "SKIP  server tasks-status-notifications:" in out
        assert "Skipped: SEP-2663 delivers notifications/tasks" in out  # the suite's reason
        assert "1 skipped" in out
        listed = tmp_path / "expected.yml"
        listed.write_text("server:\n  - tasks-status-notifications  # the suite skips it\n")
        assert (
            suite.main(
                [
                    "server",
                    "--url",
                    url,
                    "--scenario",
                    "tasks-status-notifications",
                    "--expected-failures",
                    str(listed),
                ]
            )
            == 0
        )
        assert "XFAIL server tasks-status-notifications: SKIP:" in capsys.readouterr().out
        status, out = _main(
            suite,
            capsys,
            "server",
            "--url",
            url,
            "--scenario",
            "input-required-result-validate-input",
            "--spec-version",
            "2026-07-28",
        )
        assert status == 1
        assert "NONE  server input-required-result-validate-input:" in out
