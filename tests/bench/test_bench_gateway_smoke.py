"""Smoke test for the gateway benchmark (``bench/gateway/run.py --quick``).

Not a timed test: it checks that every configuration (the echo server direct, and through
``mcpbind host --serve`` / ``--serve-http``) ran end to end, answered every call with the
echoed text (the harness checks each answer) and reported the numbers the table is made of.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "gateway" / "run.py"

pytestmark = pytest.mark.slow


def test_quick_run_measures_every_configuration(tmp_path: Path) -> None:
    out = tmp_path / "gateway.json"
    done = subprocess.run(
        [sys.executable, str(RUN), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(out.read_text())
    (round_,) = data["rounds"]
    assert set(round_) == {"direct/stdio", "gateway/stdio", "direct/http", "gateway/http"}
    for config, modes in round_.items():
        assert modes["seq"]["calls"] == 50, config
        assert modes["conc"]["calls"] == 200 and modes["conc"]["inflight"] == 32, config
        assert modes["seq"]["calls_per_s"] > 0 and modes["seq"]["p99_ms"] > 0, config
    assert "| stdio | seq | gateway |" in done.stdout
    assert "load average" in done.stdout
