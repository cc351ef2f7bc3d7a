"""mypy --strict proves the generated stubs return the right result type per method, direction and
version (tests/typing/reveal_stubs.py), and rejects wrong params."""

from __future__ import annotations

import re
from pathlib import Path

from mypy import api

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TARGET = HERE / "reveal_stubs.py"


def test_stub_result_types_are_revealed_as_expected() -> None:
    lines = TARGET.read_text().splitlines()
    expected = {
        i + 1: m.group(1).strip()
        for i, line in enumerate(lines)
        if (m := re.search(r"# expect: (.+)$", line))
    }
    errors = {i + 1 for i, line in enumerate(lines) if "# error:" in line}
    stdout, stderr, _ = api.run(
        [
            "--strict",
            "--no-error-summary",
            "--hide-error-context",
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            str(TARGET),
        ]
    )
    revealed: dict[int, str] = {}
    failed: set[int] = set()
    for line in stdout.splitlines():
        m = re.match(r".*reveal_stubs\.py:(\d+): (\w+): (.*)$", line)
        if not m:
            continue
        n, kind, text = int(m.group(1)), m.group(2), m.group(3)
        if kind == "note" and text.startswith("Revealed type is"):
            revealed[n] = text.split('"')[1]
        elif kind == "error":
            failed.add(n)
    assert revealed == expected, stdout + stderr
    assert failed == errors, stdout
    assert len(expected) >= 20
