"""mcpbind's task client against the reference server-everything (TypeScript SDK, pinned in
tests/peers/server-everything, installed by .ci/run): its ``simulate-research-query`` tool
requires a task (2025-11-25 basic/utilities/tasks.mdx §Tool-Level Negotiation).

``mcpbind call`` runs it to the end with its status shown; its ambiguous variant asks for
input through ``tasks/result`` (§Input Required Status), answered by the usual elicitation
handler; Ctrl-C cancels the task (§Cancelling Tasks)."""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpbind import Client, ClientHandlers
from mcpbind import types as t
from mcpbind.client import start_task
from mcpbind.transports import StdioClientTransport

ROOT = Path(__file__).resolve().parents[2]
SERVER = (
    ROOT
    / "tests/peers/server-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)

pytestmark = pytest.mark.skipif(
    not SERVER.exists() or shutil.which("node") is None,
    reason="server-everything is not installed: npm ci --prefix tests/peers/server-everything",
)


def _cli(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "mcpbind.cli", "call", f"node {SERVER} stdio", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # The test sends SIGINT, which a test run started as a background job ignores (and
        # its children would inherit that).
        preexec_fn=functools.partial(signal.signal, signal.SIGINT, signal.SIG_DFL),
    )


def test_cli_runs_a_task_required_tool_to_the_end_showing_status() -> None:
    proc = _cli("simulate-research-query", "--args", '{"topic": "tides"}')
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "# Research Report: tides" in out
    lines = [line for line in err.splitlines() if line.startswith("task ")]
    assert any("working: Gathering sources" in line for line in lines)
    assert lines[-1].split()[2].rstrip(":") == "completed"


def test_cli_ctrl_c_cancels_the_task() -> None:
    proc = _cli("simulate-research-query", "--args", '{"topic": "stopped"}')
    assert proc.stderr is not None
    first = proc.stderr.readline()  # the first status line: the task exists and runs
    assert first.startswith("task ") and "working" in first, first
    os.kill(proc.pid, signal.SIGINT)
    out, rest = proc.communicate(timeout=60)
    assert proc.returncode == 130, rest
    assert "cancelled" in rest
    assert "Research Report" not in out


@pytest.mark.anyio
async def test_input_required_is_answered_by_the_elicitation_handler() -> None:
    asked: list[Any] = []

    async def elicit(params: Any) -> t.ElicitResult:
        asked.append(params)
        return t.ElicitResult(action="accept", content={"interpretation": "technical"})

    async with (
        StdioClientTransport.spawn("node", [str(SERVER), "stdio"]) as transport,
        Client(transport, handlers=ClientHandlers(elicitation=elicit)) as client,
    ):
        handle = await start_task(
            client, "simulate-research-query", {"topic": "python", "ambiguous": True}
        )
        seen = [state.status async for state in handle.updates()]
        result = await handle.result()
    assert "input_required" in seen and seen[-1] == "completed"
    assert asked and "multiple interpretations" in asked[0].message
    text = result.content[0]
    assert isinstance(text, t.TextContent) and "Clarification**: technical" in text.text
