"""Smoke test for ``bench/rt/sides.py``: each side of the stdio round trip runs alone
against its canned peer, on both eras and in both modes, and reports a positive cost per
call (not a timed test; the server side also checks every call was answered)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SIDES = Path(__file__).resolve().parents[2] / "bench" / "rt" / "sides.py"

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("side", ["client", "server"])
@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("mode", ["seq", "conc"])
def test_side_runs_alone(side: str, protocol: str, mode: str) -> None:
    command = [sys.executable, str(SIDES), side, "--protocol", protocol, "--mode", mode]
    done = subprocess.run(
        [*command, "--calls", "40"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["side"] == side and report["protocol"] == protocol and report["mode"] == mode
    assert report["us_per_call"] > 0
