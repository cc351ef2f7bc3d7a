"""The official TypeScript SDK's client (1.32, ``client.experimental.tasks``; installed for the
round-trip benchmark in bench/rt/peers/ts) drives tasks through the gateway (issue 33, "tasks
passed through"): ``mcpbind host -c servers.json --serve`` over stdio in front of the real
mcpbind task server (tests/tasks/task_app.py), on 2025-11-25. ``callToolStream`` with ``task``
creates the task, follows its status and reads the result, and answers the elicitation the
upstream task asks, which names the task by the gateway's id (basic/utilities/tasks.mdx
§Creating Tasks, §Getting Tasks, §Input Required Status, §Related Task Metadata)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCRIPT = HERE / "ts_gateway_task_client.mjs"
SDK = ROOT / "bench/rt/peers/ts/node_modules/@modelcontextprotocol/sdk"
TASK_APP = str(ROOT / "tests" / "tasks" / "task_app.py")

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(
        not SDK.exists() or shutil.which("node") is None,
        reason="the TypeScript SDK peer is not installed: make bench/rt/peers/ts/node_modules",
    ),
]


def test_typescript_client_runs_tasks_through_the_gateway(tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    jobs = {"command": sys.executable, "args": [TASK_APP, "stdio"], "approval": "allow"}
    config.write_text(json.dumps({"mcpServers": {"jobs": jobs}}))
    done = subprocess.run(
        ["node", str(SCRIPT), sys.executable, str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    slow, ask = out["slow"], out["ask"]
    assert slow["types"][0] == "taskCreated" and slow["types"][-1] == "result"
    assert slow["text"] == "slept 0.3s" and slow["status"] == "completed"
    assert ask["text"] == "hello Ada" and ask["status"] == "completed"
    assert out["related"] == [ask["taskId"]]
