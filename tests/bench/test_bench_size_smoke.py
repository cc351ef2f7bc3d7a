"""Smoke tests for the cold-start, idle-session memory and size-scaling benchmarks
(``bench/coldstart.py``, ``bench/memory_sessions.py``, ``bench/scale.py``; issue 15).

Not timed tests: each script runs end to end at smoke size against real processes (stdio
servers, uvicorn on 127.0.0.1) and must report positive figures for every configuration it
ran; the figures themselves are judged by the full benchmark on a quiet machine.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"

pytestmark = [pytest.mark.slow, pytest.mark.interop]

OFFICIAL = importlib.util.find_spec("mcp") is not None


def _run(script: str, *args: str, tmp_path: Path) -> Any:
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), *args, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(out.read_text()), proc.stdout


def test_coldstart_times_every_case(tmp_path: Path) -> None:
    cases = "python,mcpbind import,mcpbind ls" + (",official import,official ls" * OFFICIAL)
    times, stdout = _run("coldstart.py", "--runs", "1", "--only", cases, tmp_path=tmp_path)
    assert set(times) == set(cases.split(","))
    for name, runs in times.items():
        assert len(runs) == 1 and all(wall > 0 and cpu > 0 for wall, cpu in runs), name
    assert "< 60 ms" in stdout and "< 300 ms" in stdout, stdout


def test_memory_benchmark_opens_every_session(tmp_path: Path) -> None:
    only = "mcpbind,official-py" if OFFICIAL else "mcpbind"
    rows, stdout = _run("memory_sessions.py", "--sessions", "60", "--only", only, tmp_path=tmp_path)
    assert [r["server"] for r in rows] == only.split(",")
    for row in rows:
        assert row["sessions"] == 60, row  # each opened, and the first still answered
        assert row["rss_before"] > 0 and row["rss_after"] > 0, row
    assert "per session" in stdout


def test_scale_benchmark_measures_each_size_and_plots(tmp_path: Path) -> None:
    plot = tmp_path / "scale.png"
    args = ["--quick", "--repeat", "1"] + (["--no-peers"] if not OFFICIAL else [])
    if importlib.util.find_spec("matplotlib") is not None:
        args += ["--plot", str(plot)]
    data, stdout = _run("scale.py", *args, tmp_path=tmp_path)
    assert [n for n, _ in data["tools/list"]["mcpbind"]] == [10, 100]
    assert [n for n, _ in data["resources/read"]["mcpbind"]] == [1024, 65536]
    assert [n for n, _ in data["host"]["mcpbind Host start-up"]] == [1, 3]
    for series in data.values():
        for points in series.values():
            assert all(seconds > 0 for _, seconds in points), points
    if OFFICIAL:
        assert len(data["tools/list"]["official SDK"]) == 2
    if "--plot" in args:
        assert plot.read_bytes().startswith(b"\x89PNG"), stdout
