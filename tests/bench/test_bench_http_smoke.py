"""Smoke test for the Streamable HTTP benchmark (``bench/http/run.py --quick``).

Not a timed test: it checks that the benchmark runs end to end against every server that is
available here (real uvicorn / Node servers on 127.0.0.1, real MCP sessions: initialize,
initialized, ``tools/call echo`` in a loop, DELETE) and that the table has positive numbers
for each one at 1 and 10 clients. A peer is skipped only with its reason (no node_modules).
Spec: basic/transports.mdx, "Streamable HTTP" (sessions, JSON and SSE responses).

The ``(2026-07-28)`` rows drive the same mcpbind and official-SDK apps with stateless requests
(2026-07-28 basic/transports/streamable-http.mdx: no initialize, no session; every POST carries
the ``_meta`` request metadata and the ``MCP-Protocol-Version`` / ``Mcp-Method`` / ``Mcp-Name``
headers); the load generator fails the run unless each call echoes with ``resultType``
"complete", so positive numbers mean both servers answered every stateless call.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTTP = ROOT / "bench" / "http"
RUN = HTTP / "run.py"
LOADGEN_MODULES = HTTP / "loadgen" / "node_modules" / "undici"
TS_MODULES = HTTP / "peers" / "ts" / "node_modules" / "@modelcontextprotocol" / "sdk"

pytestmark = [pytest.mark.slow, pytest.mark.interop]

CLIENTS = (1, 10)
FLOOR = "floor-node [node]"
OFFICIAL = "official-py [uvicorn asyncio+h11]"
MCPBIND = "mcpbind [uvicorn asyncio+h11]"
TS = "ts-sdk [node]"
OFFICIAL_2026 = "official-py (2026-07-28) [uvicorn asyncio+h11]"
MCPBIND_2026 = "mcpbind (2026-07-28) [uvicorn asyncio+h11]"
TS_2026 = "ts-sdk (2026-07-28) [node]"


def _mcpbind_http() -> bool:
    return importlib.util.find_spec("mcpbind.http") is not None


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    if not LOADGEN_MODULES.is_dir():
        pytest.skip("load generator not installed: run `npm ci --prefix bench/http/loadgen`")
    out = tmp_path_factory.mktemp("bench-http") / "results.json"
    only = ",".join((FLOOR, OFFICIAL, MCPBIND, TS, OFFICIAL_2026, MCPBIND_2026, TS_2026))
    # Short cells: the file must stay well under 30 s on a loaded 2-core machine.
    cmd = [sys.executable, str(RUN), "--quick", "--duration", "0.3", "--warmup", "0.1"]
    cmd += ["--prime", "0.2"]
    cmd += ["--clients", "1,10", "--only", only]
    proc = subprocess.Popen(
        [*cmd, "--json", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:  # run.py stops its servers on SIGTERM
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.communicate()
    assert proc.returncode == 0, f"run.py failed:\n{stdout}\n{stderr}"
    return json.loads(out.read_text()), stdout


def _cells(data: dict[str, Any], key: str) -> dict[int, dict[str, Any]]:
    return {c["clients"]: c for c in data["best"] if f"{c['target']} [{c['runs_on']}]" == key}


def _check(data: dict[str, Any], key: str, mode: str) -> None:
    cells = _cells(data, key)
    assert sorted(cells) == list(CLIENTS), (key, data["skipped"], data["failed"])
    for cell in cells.values():
        assert cell["protocol"] == ("2026-07-28" if "(2026-07-28)" in key else "2025-11-25"), cell
        assert cell["requests"] > 0 and cell["rps"] > 0, cell
        assert 0 < cell["p50_ms"] <= cell["p99_ms"], cell
        assert cell["mode"] == mode, cell
        assert cell["server_cpu_us_min"] > 0, cell
        _check_placement(cell, data["env"]["pinning"])


def _ratio(line: str) -> bool:
    """A line of a ratio table (not the placement lines, which name the rows too)."""
    return "threads on CPU" not in line


def _check_placement(cell: dict[str, Any], pinning: str) -> None:
    """Every thread of the server is held to the server's CPU and every thread of the load
    generator to its own (Node's V8 and libuv threads too), as the header says."""
    server, _, loadgen = cell["placement"].partition(", load generator ")
    if pinning == "none":
        assert server.startswith("server ") and loadgen, cell
        return
    gen_cpu, srv_cpu = (part.split()[-1] for part in pinning.split(", "))
    assert server.startswith("server ") and server.endswith(f"on CPU {srv_cpu}"), cell
    assert server.count(" on CPU ") == 1 and loadgen.count(" on CPU ") == 1, cell
    assert loadgen.endswith(f"on CPU {gen_cpu}"), cell


def test_floor_and_official_sdk_have_numbers(quick: tuple[dict[str, Any], str]) -> None:
    data, stdout = quick
    assert data["failed"] == {}
    _check(data, FLOOR, "json")
    if importlib.util.find_spec("mcp") is None:
        assert "mcp" in data["skipped"][OFFICIAL]
    else:
        _check(data, OFFICIAL, "json")
    header = stdout.splitlines()
    assert any(line.startswith("server ") and "req/s" in line for line in header), stdout


def test_typescript_sdk_has_numbers_or_a_reason(quick: tuple[dict[str, Any], str]) -> None:
    data, _ = quick
    if not TS_MODULES.is_dir():
        assert "npm ci --prefix" in data["skipped"][TS]
        pytest.skip("TS peer not installed: run `npm ci --prefix bench/http/peers/ts`")
    _check(data, TS, "json")


def test_typescript_sdk_2026_row_runs_or_names_the_missing_version(
    quick: tuple[dict[str, Any], str],
) -> None:
    data, _ = quick
    if not TS_MODULES.is_dir():
        pytest.skip("TS peer not installed: run `npm ci --prefix bench/http/peers/ts`")
    if TS_2026 in data["skipped"]:
        assert "does not speak 2026-07-28" in data["skipped"][TS_2026], data["skipped"]
    else:
        _check(data, TS_2026, "json")


def test_2026_rows_have_numbers_and_ratios_to_the_official_sdk(
    quick: tuple[dict[str, Any], str],
) -> None:
    data, stdout = quick
    if importlib.util.find_spec("mcp") is None or not _mcpbind_http():
        pytest.skip("needs both mcpbind.http and the official SDK")
    _check(data, OFFICIAL_2026, "json")
    _check(data, MCPBIND_2026, "json")
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("2026-07-28 throughput"))
    ratio_lines = [line for line in lines[start:] if OFFICIAL_2026 in line and _ratio(line)]
    assert len(ratio_lines) >= 2, stdout  # req/s and CPU-efficiency tables
    for line in ratio_lines:
        values = [float(v[:-1]) for v in line.split()[-len(CLIENTS) :]]
        assert all(v > 0 for v in values), line


def test_mcpbind_has_numbers_and_ratios(quick: tuple[dict[str, Any], str]) -> None:
    data, stdout = quick
    if not _mcpbind_http():
        assert "mcpbind" in data["skipped"][MCPBIND]
        pytest.skip("mcpbind.http is not written yet")
    _check(data, MCPBIND, "json")
    assert "Throughput ratios" in stdout, stdout
    ratio_lines = [
        line
        for line in stdout.splitlines()
        if "official-py [uvicorn asyncio+h11]" in line and _ratio(line)
    ]
    assert ratio_lines and all(line.rstrip().endswith("x") for line in ratio_lines), stdout


def test_loadgen_makes_a_fixed_number_of_calls_when_asked(tmp_path: Path) -> None:
    """``loadgen.mjs --calls N`` (what ``bench/http/instructions.py`` counts instructions
    over): exactly N echo calls per client, every one checked, then it exits."""
    if not LOADGEN_MODULES.is_dir():
        pytest.skip("load generator not installed: run `npm ci --prefix bench/http/loadgen`")
    bench = _bench_module()
    node = bench._node_binary(None)
    assert node is not None
    floor = next(t for t in bench.targets() if t.key == FLOOR)
    with bench.running(floor, node, None, False) as server:
        cmd = [node, str(HTTP / "loadgen" / "loadgen.mjs"), "--url", server.url]
        done = subprocess.run(
            [*cmd, "--clients", "3", "--calls", "7"], capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["# measuring", "# done"], done.stdout
    result = json.loads(lines[-1])
    assert result["requests"] == 21 and result["clients"] == 3, result


def _bench_module() -> Any:
    sys.path.insert(0, str(HTTP))
    try:
        import run as bench
    finally:
        sys.path.remove(str(HTTP))
    return bench


def test_server_cpu_time_is_read_finer_than_clock_ticks() -> None:
    """The server CPU per request comes from the server's own CPU-time clock: a process that
    used 15 ms reads as 15 ms, not as a whole number of 10 ms ticks (a short cell at one client
    on a loaded machine used under one tick and read as 0)."""
    burn = (
        "import sys, time\n"
        "while time.process_time() < 0.015: pass\n"
        "print(time.process_time(), flush=True)\n"
        "sys.stdin.readline()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", burn], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        used = float(proc.stdout.readline())
        read = _bench_module()._proc_cpu_seconds(proc.pid)
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()
    assert used <= read < used + 0.003, (used, read)
