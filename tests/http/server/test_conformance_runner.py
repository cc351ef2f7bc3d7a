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


def test_expected_failures_file_is_empty(run: ModuleType) -> None:
    """Nothing may fail: the client implements authorization, so its section is empty too.

    Spec: issue 4 §Conformance suite in CI; issue 10 "What it must show" 1.
    """
    assert run.read_expected(run.EXPECTED) == {"server": set(), "client": set()}


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


def test_summary_and_verdicts(run: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    """PASS/FAIL/XFAIL per scenario from the suite's SUMMARY lines; stale and missing fail.

    Spec: issue 4 §Conformance suite in CI.
    """
    out = "✓ a: 3 passed, 0 failed\n✗ b: 1 passed, 2 failed\n✗ c: 0 passed, 1 failed, 1 warnings\n"
    results = run.summary(out)
    assert results == {"a": (3, 0, 0), "b": (1, 2, 0), "c": (0, 1, 1)}
    assert run.report("server", ["a", "c"], results, {"c"}) == 0
    assert run.report("server", ["a", "b"], results, set()) == 1  # unexpected failure
    assert run.report("server", ["a"], results, {"a"}) == 1  # stale: passes but listed
    assert run.report("server", ["a"], results, {"gone"}) == 1  # stale: not a scenario
    # An entry for a scenario of another spec version (not run now) is not stale; one the
    # suite does not know at all still is.
    assert run.report("server", ["a"], results, {"other"}, "v1", {"a", "other"}) == 0
    assert run.report("server", ["a"], results, {"gone"}, "v1", {"a", "other"}) == 1
    assert run.report("server", ["a", "d"], results, set()) == 1  # no result at all
    lines = capsys.readouterr().out.splitlines()
    assert "PASS  server a: 3 checks passed, 0 failed" in lines
    assert any(line.startswith("XFAIL server c") for line in lines)
    assert any(line.startswith("TOTAL server: 2 scenarios, 1 passed, 1 expected") for line in lines)


def test_bind_loopback_preload(run: ModuleType) -> None:
    """bind-loopback.cjs: a Node server listening without a host binds 127.0.0.1, at once
    (address() right after listen(), as the harness's mock servers read it); an explicit
    host is left alone.

    Spec: 2025-11-25 basic/transports.mdx §Security Warning 2 (bind to localhost).
    """
    import json
    import subprocess

    node = run.BIN / "node"
    if not node.exists():
        pytest.skip("the pinned Node is not installed (npm ci --prefix conformance)")
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


def test_timing_sensitive_client_scenario_is_rerun_once_alone(
    run: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The suite runs client scenarios in parallel: a failed ``sse-retry`` is run once more
    on its own and its second result counts; other failures are not retried, and a retry
    that fails again is a failure.

    Spec: issue 4 §Conformance suite in CI.
    """
    import argparse
    import subprocess

    parallel = "✓ initialize: 1 passed, 0 failed\n✗ sse-retry: 1 passed, 2 failed\n"
    monkeypatch.setattr(run, "listed", lambda side, version: ["initialize", "sse-retry"])
    monkeypatch.setattr(
        run, "_suite", lambda *a, **k: subprocess.CompletedProcess(a, 1, parallel, "")
    )
    alone: list[str] = []
    second = [(3, 0, 0)]

    def once(args: argparse.Namespace, scenario: str) -> tuple[int, int, int]:
        alone.append(scenario)
        return second[0]

    monkeypatch.setattr(run, "_client_once", once)
    args = argparse.Namespace(
        command="client",
        spec_version="2025-11-25",
        scenario=None,
        retry=None,
        verbose=False,
        all_names=None,
        client_timeout=120_000,
    )
    assert run.run_client(args, set()) == 0
    assert alone == ["sse-retry"]
    out = capsys.readouterr().out
    assert "RETRY client sse-retry" in out and "PASS  client sse-retry: 3 checks passed" in out

    second[0] = (1, 2, 0)  # fails alone too: a real failure
    alone.clear()
    assert run.run_client(args, set()) == 1
    assert alone == ["sse-retry"]
    assert "FAIL  client sse-retry" in capsys.readouterr().out

    parallel = "✗ initialize: 0 passed, 1 failed\n✓ sse-retry: 3 passed, 0 failed\n"
    alone.clear()
    assert run.run_client(args, set()) == 1  # not timing-sensitive: never retried
    assert alone == []
