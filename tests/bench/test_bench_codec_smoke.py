"""Smoke test for the codec benchmark (``bench/bench_codec.py --quick``).

Not a timed test: it checks that the script runs end to end and prints a row with positive
numbers for every message, and that the work it times is the right work: mcpbind's decoded
objects are of the strict types and re-encode to JSON equal to the input.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("mcp", reason="the official SDK (the `peers` extra) is not installed")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "bench_codec.py"

pytestmark = [pytest.mark.slow, pytest.mark.interop]

MESSAGES = (
    "tools/list result (50 tools)",
    "tools/call request",
    "tools/call result (text+image+resource+link)",
    "resources/read result (100 KB text)",
    "progress notification",
    "initialize request",
)
NUMBER = re.compile(r"^[\d,]+(\.\d+)?x?$")


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_codec", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # msgspec resolves the script's string annotations through sys.modules.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def quick_output() -> str:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _rows(output: str, name: str) -> list[list[str]]:
    prefix = f"| {name} |"
    return [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in output.splitlines()
        if line.startswith(prefix)
    ]


def _positive(cell: str) -> float:
    assert NUMBER.match(cell), cell
    value = float(cell.rstrip("x").replace(",", ""))
    assert value > 0, cell
    return value


def test_every_message_has_rows_with_positive_numbers(quick_output: str) -> None:
    for name in MESSAGES:
        rows = _rows(quick_output, name)
        assert len(rows) == 2, f"{name}: expected a main row and an other-paths row"
        main, paths = rows
        assert len(main) == 8, main
        assert main[1].endswith(("B", "KB")), main
        for cell in main[2:]:
            _positive(cell)
        assert len(paths) == 6, paths
        for cell in paths[1:]:
            _positive(cell)


def test_final_line_states_the_targets(quick_output: str) -> None:
    last = quick_output.strip().splitlines()[-1]
    assert last.startswith(("TARGETS HOLD", "TARGETS FAIL")), last


def test_mcpbind_decodes_to_strict_types_and_round_trips(bench: ModuleType) -> None:
    cases = bench.build_cases()
    assert [c.name for c in cases] == list(MESSAGES)
    for c in cases:
        obj = c.mcpbind_decode(c.data)
        expected = getattr(c.mcpbind_type, "__origin__", c.mcpbind_type)
        assert isinstance(obj, expected), c.name
        assert json.loads(c.mcpbind_encode(obj)) == json.loads(c.data), c.name
    bench.verify(cases)  # the same checks plus the two-pass and official paths


def test_messages_are_realistic(bench: ModuleType) -> None:
    by_name = {c.name: json.loads(c.data) for c in bench.build_cases()}
    tools = by_name["tools/list result (50 tools)"]["result"]["tools"]
    assert len(tools) == 50
    assert any("outputSchema" in t for t in tools) and any("annotations" in t for t in tools)
    content = by_name["tools/call result (text+image+resource+link)"]["result"]["content"]
    assert [b["type"] for b in content] == ["text", "image", "resource", "resource_link"]
    assert len(content[1]["data"]) >= 8000
    text = by_name["resources/read result (100 KB text)"]["result"]["contents"][0]["text"]
    assert len(text.encode()) >= 100 * 1024


def test_check_exits_nonzero_only_when_a_target_fails(bench: ModuleType) -> None:
    small, large = bench.build_cases()[1], bench.build_cases()[3]

    def row(case: object, ratio: float) -> object:
        return bench.Row(case, m_dec=ratio, o_dec=1.0, m_enc=1, o_enc=1, m_two=1, o_session=1)

    assert bench.verdict([row(small, 10.0), row(large, 1.0)])[0]
    assert not bench.verdict([row(small, 9.9), row(large, 1.0)])[0]
    assert not bench.verdict([row(small, 10.0), row(large, 0.9)])[0]
