"""Smoke test for the soak benchmark (``bench/soak/run.py``, ``make soak``).

Not a timed test: a 12-second run with 10 clients checks that every part of the mix ran
against a real uvicorn worker (echo calls, cancelled calls, sessions created and deleted,
2026-07-28 stateless calls, a ``def`` tool, slow listen and GET readers) with no error, and
that the report has its figures (RSS at start and end, drift, p50/p99). The figures
themselves are for ``make soak`` on a quiet machine (BENCHMARKS.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "soak" / "run.py"

pytestmark = [pytest.mark.slow]


def test_soak_runs_the_whole_mix(tmp_path: Path) -> None:
    out = tmp_path / "soak.json"
    command = [sys.executable, str(RUN), "--seconds", "12", "--clients", "10", "--think", "0.05"]
    command += ["--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, env=os.environ)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(out.read_text())
    assert report["errors"] == 0, report["first_errors"]
    assert set(report["ops"]) == {"echo", "cancel", "churn", "stateless", "count"}
    assert report["calls_measured"] > 0 and 0 < report["p50_ms"] <= report["p99_ms"]
    assert report["rss_start_kib"] > 0 and report["rss_end_kib"] > 0
    assert report["stream_chunks_read"] > 0  # one listen and one GET slow reader
    assert "drift" in done.stdout and "p99" in done.stdout
