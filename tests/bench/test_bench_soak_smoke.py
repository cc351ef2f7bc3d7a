"""Smoke tests for the soak benchmark (``bench/soak/run.py``, ``make soak``).

Not timed tests: a 12-second run with 10 clients in two client processes checks that every
part of the mix ran against a real uvicorn worker (echo calls, cancelled calls, sessions
created and deleted, 2026-07-28 stateless calls, a ``def`` tool, slow listen and GET readers,
a 2026-07-28 listener, a client flooded with notifications it reads, a client that never
reads a flooding response) with no error and nothing hung, and that the report has its figures
(RSS, drift, p50/p99, CPU per process). A second run with a task that never ends checks the
harness itself: it still prints its report, exits with status 2 and leaves no process behind.
The figures themselves are for ``make soak`` on a quiet machine (BENCHMARKS.md).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "soak" / "run.py"

pytestmark = [pytest.mark.slow]


def soak(tmp_path: Path, *options: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = tmp_path / "soak.json"
    command = [sys.executable, str(RUN), "--clients", "10", "--procs", "2", "--json", str(out)]
    done = subprocess.run(
        [*command, *options], capture_output=True, text=True, timeout=180, env=os.environ
    )
    return done, json.loads(out.read_text())


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_soak_runs_the_whole_mix(tmp_path: Path) -> None:
    done, report = soak(tmp_path, "--seconds", "12", "--think", "0.05")
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["errors"] == 0 and report["hung"] == [], report
    assert set(report["ops"]) == {
        "echo",
        "cancel",
        "churn",
        "stateless",
        "count",
        "flood",
        "unread",
    }
    assert report["calls_measured"] > 0 and 0 < report["p50_ms"] <= report["p99_ms"]
    assert report["rss_warm_kib"] > 0 and report["rss_end_kib"] > 0
    assert report["stream_chunks_read"] > 0  # one listen and one GET slow reader
    assert report["notifications"] > 0  # the 2026-07-28 listeners heard the server's updates
    assert set(report["cpu_pct"]) == {"server", "clients 0-4", "clients 5-9"}
    for word in ("drift", "p99", "CPU", "hung 0"):
        assert word in done.stdout
    assert all(gone(pid) for pid in report["pids"].values())


def test_a_hang_still_reports_exits_2_and_stops_every_process(tmp_path: Path) -> None:
    options = ["--seconds", "3", "--warmup", "1", "--grace", "4", "--kill-after", "1"]
    options.append("--inject-hang")
    done, report = soak(tmp_path, *options)
    assert done.returncode == 2, done.stdout + done.stderr
    hung = "\n".join(report["hung"])
    assert "injected hang" in hung and "did not exit: killed" in hung
    assert "hung 0" not in done.stdout and "drift" in done.stdout  # the report still printed
    assert all(gone(pid) for pid in report["pids"].values())


def test_a_cluster_soak_runs_the_mix_across_workers(tmp_path: Path) -> None:
    """``--workers 2`` (make soak-cluster): the same mix through haproxy round-robin over two
    workers on one redis-server (only worker 0 announces changes: listeners that landed on
    worker 1 hear them over the bus), with no error and nothing hung; each worker's RSS,
    Redis's memory and keys, and the CPU of haproxy and Redis are reported."""
    for program in ("redis-server", "haproxy"):
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed (apt-get install {program})")
    options = ["--workers", "2", "--seconds", "12", "--think", "0.05"]
    done, report = soak(tmp_path, *options)
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["errors"] == 0 and report["hung"] == [], report
    assert report["ops"]["echo"] > 0 and report["ops"]["churn"] > 0, report["ops"]
    assert report["notifications"] > 0
    assert set(report["per_worker"]) == {"worker 0", "worker 1"}
    assert all(
        w["rss_warm_kib"] > 0 and w["rss_end_kib"] > 0 for w in report["per_worker"].values()
    )
    assert report["redis_memory"]["end"] > 0 and report["redis_keys"]["end"] > 0
    assert {"worker 0", "worker 1", "haproxy", "redis"} <= set(report["cpu_pct"])
    for word in ("worker 1: RSS", "Redis used_memory", "hung 0"):
        assert word in done.stdout
    assert all(gone(pid) for pid in report["pids"].values())
