"""Smoke test for the round-trip benchmark (``bench/rt/run.py --quick``).

Not a timed test: it only checks that every configuration ran end to end (handshake,
echo round trips in both modes, clean shutdown) and reported positive numbers. The
TypeScript peer is skipped when its node_modules are not installed. The stateless
2026-07-28 rows (stdio only; spec 2026-07-28 basic/lifecycle: no ``initialize``,
per-request ``_meta``) run in the same quick pass, and their ratios must divide by the
2026-07-28 references, not the handshake ones.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "rt" / "run.py"
TS_DIR = ROOT / "bench" / "rt" / "peers" / "ts"

pytestmark = [pytest.mark.slow, pytest.mark.interop]

PY_CONFIGS = ("official-py/stdio", "official-py/memory")
FLOOR_CONFIGS = ("raw-floor/stdio", "raw-floor/memory")
TS_CONFIGS = ("ts-sdk/stdio", "ts-sdk/memory")
STATELESS_PY_CONFIGS = ("official-py-2026/stdio",)
STATELESS_CONFIGS = ("raw-floor-2026/stdio", "mcpbind-2026/stdio")


def _ts_skip_reason() -> str | None:
    bundled = ROOT / "bench" / "http" / "loadgen" / "node_modules" / ".bin" / "node"
    if not bundled.exists() and shutil.which("node") is None:
        return "TS peer skipped: no Node 24 from npm and no node on PATH"
    if not (TS_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        return (
            "TS peer skipped: bench/rt/peers/ts/node_modules is missing "
            "(install with `npm ci --prefix bench/rt/peers/ts`)"
        )
    return None


def _py_skip_reason() -> str | None:
    if importlib.util.find_spec("mcp") is None:
        return "official Python SDK peer skipped: `mcp` is not installed (pip install -e .[peers])"
    return None


@pytest.fixture(scope="module")
def quick_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    wanted = [*FLOOR_CONFIGS, "mcpbind", *STATELESS_CONFIGS]
    if _py_skip_reason() is None:
        wanted += [*PY_CONFIGS, *STATELESS_PY_CONFIGS]
    if _ts_skip_reason() is None:
        wanted += TS_CONFIGS
    out = tmp_path_factory.mktemp("bench-rt") / "results.json"
    cmd = [sys.executable, str(RUN), "--quick", "--only", ",".join(wanted), "--json", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, f"run.py failed:\n{proc.stdout}\n{proc.stderr}"
    assert "calls/s" in proc.stdout, proc.stdout
    payload = json.loads(out.read_text())
    return {f"{r['impl']}/{r['transport']}": r for r in payload["results"]}


def _check_ran(entry: dict[str, Any]) -> None:
    assert entry["status"] == "ok", entry
    result = entry["result"]
    for mode in ("sequential", "concurrent"):
        numbers = result[mode]
        assert numbers["calls"] > 0, numbers
        assert numbers["calls_per_s"] > 0, numbers
        assert numbers["p50_ms"] > 0, numbers
        assert numbers["p99_ms"] >= numbers["p50_ms"], numbers
    assert result["concurrent"]["inflight"] == 32


@pytest.mark.parametrize("key", FLOOR_CONFIGS)
def test_raw_floor_runs(quick_results: dict[str, dict[str, Any]], key: str) -> None:
    _check_ran(quick_results[key])


@pytest.mark.parametrize("key", PY_CONFIGS)
def test_official_python_sdk_runs(quick_results: dict[str, dict[str, Any]], key: str) -> None:
    reason = _py_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    _check_ran(quick_results[key])


@pytest.mark.parametrize("key", TS_CONFIGS)
def test_typescript_sdk_runs(quick_results: dict[str, dict[str, Any]], key: str) -> None:
    reason = _ts_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    _check_ran(quick_results[key])


@pytest.mark.parametrize("transport", ("stdio", "memory"))
def test_mcpbind_placeholder_never_fails(
    quick_results: dict[str, dict[str, Any]], transport: str
) -> None:
    entry = quick_results[f"mcpbind/{transport}"]
    if entry["status"] == "skipped":
        assert "mcpbind" in entry["reason"]
    else:
        _check_ran(entry)


@pytest.mark.parametrize("key", STATELESS_CONFIGS)
def test_stateless_rows_run(quick_results: dict[str, dict[str, Any]], key: str) -> None:
    """Spec 2026-07-28 basic/lifecycle: the floor and mcpbind run the stateless era."""
    entry = quick_results[key]
    assert entry["protocol"] == "2026-07-28", entry
    _check_ran(entry)
    assert "2026-07-28" in entry["result"]["detail"], entry["result"]


@pytest.mark.parametrize("key", STATELESS_PY_CONFIGS)
def test_official_python_sdk_stateless_runs(
    quick_results: dict[str, dict[str, Any]], key: str
) -> None:
    """Spec 2026-07-28 basic/lifecycle: the official client pinned to 2026-07-28 runs."""
    reason = _py_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    entry = quick_results[key]
    assert entry["protocol"] == "2026-07-28", entry
    _check_ran(entry)
    assert "mode=2026-07-28" in entry["result"]["detail"], entry["result"]


def _load_run_module() -> Any:
    spec = importlib.util.spec_from_file_location("bench_rt_run", RUN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_ratios_divide_by_same_protocol_reference() -> None:
    """A 2026-07-28 row's ratios use the 2026-07-28 references; handshake rows keep theirs."""
    run = _load_run_module()
    by_impl = {p.impl: p for p in run.peers() if p.transport == "stdio"}
    rates = {
        "official-py": 100.0,
        "raw-floor": 1000.0,
        "mcpbind": 500.0,
        "official-py-2026": 200.0,
        "raw-floor-2026": 800.0,
        "mcpbind-2026": 400.0,
    }
    outcomes = []
    for impl, rate in rates.items():
        numbers = {"calls_per_s": rate, "p50_ms": 1.0, "p99_ms": 2.0, "inflight": 1}
        result = {"sequential": numbers, "concurrent": {**numbers, "inflight": 32}}
        outcomes.append(run.Outcome(by_impl[impl], "ok", result=result))
    table = run.render_table(outcomes)
    rows = {line.split()[0]: line.split() for line in table.splitlines()[2:] if "seq" in line}
    assert rows["mcpbind"][1] == "2025-11-25"
    assert rows["mcpbind"][-2:] == ["5.00x", "0.50x"]  # 500 / 100, 500 / 1000
    assert rows["mcpbind-2026"][1] == "2026-07-28"
    assert rows["mcpbind-2026"][-2:] == ["2.00x", "0.50x"]  # 400 / 200, 400 / 800
    assert rows["official-py-2026"][-2:] == ["1.00x", "0.25x"]


def test_ratios_pair_the_runs_of_one_round() -> None:
    """The ratio columns are medians of same-round ratios: a reference's lucky quiet round does
    not set a row's ratio (best over best would read 700 / 2000 = 0.35x here), and every
    configuration of a round runs with the same CPU placement, swapped every other round."""
    run = _load_run_module()
    by_impl = {p.impl: p for p in run.peers() if p.transport == "stdio"}

    def outcome(impl: str, rates: list[float]) -> Any:
        numbers = [{"calls_per_s": rate, "p50_ms": 1.0, "p99_ms": 2.0} for rate in rates]
        runs = [
            {"sequential": {**n, "inflight": 1}, "concurrent": {**n, "inflight": 32}}
            for n in numbers
        ]
        result = run.pick_run(runs, "best")
        return run.Outcome(by_impl[impl], "ok", runs=runs, result=result)

    floor = outcome("raw-floor", [1000.0, 2000.0, 1000.0])
    mine = outcome("mcpbind", [600.0, 700.0, 620.0])
    ts = outcome("ts-sdk", [300.0, 350.0, 310.0])
    assert run.paired_ratio(mine, floor, "concurrent") == pytest.approx(0.6)
    table = run.render_table([ts, floor, mine])
    rows = {line.split()[0]: line.split() for line in table.splitlines()[2:] if "seq" in line}
    assert rows["mcpbind"][4] == "700"  # calls/s: the best run
    assert rows["mcpbind"][-3:] == ["2.00x", "-", "0.60x"]  # x TS, x official, x floor
    assert run.placement_of(1, (0, 1)) == (0, 1)
    assert run.placement_of(2, (0, 1)) == (1, 0)
    assert run.placement_of(3, (0, 1)) == (0, 1)
    assert run.placement_of(2, None) is None
