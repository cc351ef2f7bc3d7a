"""The official TypeScript SDK's client (1.32, ``client.experimental.tasks``; installed for the
round-trip benchmark in bench/rt/peers/ts) drives mcpbind task tools over stdio on 2025-11-25:
``callToolStream`` with ``task`` creates the task, follows its status and reads the result, and
answers the input the task asks for (basic/utilities/tasks.mdx §Input Required Status)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from ._support import run_node_with_task_app

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCRIPT = HERE / "ts_task_client.mjs"
SDK = ROOT / "bench/rt/peers/ts/node_modules/@modelcontextprotocol/sdk"

pytestmark = pytest.mark.skipif(
    not SDK.exists() or shutil.which("node") is None,
    reason="the TypeScript SDK peer is not installed: make bench/rt/peers/ts/node_modules",
)


def test_typescript_client_runs_mcpbind_tasks() -> None:
    out: dict[str, Any] = run_node_with_task_app(SCRIPT)
    assert out["slow"]["types"][0] == "taskCreated" and out["slow"]["types"][-1] == "result"
    assert out["slow"]["text"] == "slept 0.3s" and out["slow"]["status"] == "completed"
    assert out["ask"]["text"] == "hello Ada" and out["ask"]["status"] == "completed"
