"""The client imports what an era or a feature needs only when it is used (issue 15, cold
start; not spec behaviour): ``from mcpbind import Client`` loads neither the 2026-07-28
pipeline nor listen, list refresh, the requestor side of tasks, nor the server-string launcher;
a handshake-era session runs without them; negotiating 2026-07-28 loads the pipeline only.
Checked in a fresh interpreter each, so other tests' imports do not count."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LAZY = (
    "mcpbind.client.pipeline",
    "mcpbind.client.listen",
    "mcpbind.client.refresh",
    "mcpbind.client.tasks",
    "mcpbind.client.tool_headers",
    "mcpbind.launch",
    "mcpbind.http",
    "httpx2",
)

SESSION = """
import anyio
from mcpbind import Client, Server, LATEST_HANDSHAKE, LATEST_STATELESS

server = Server("lazy")

@server.tool()
async def add(a: int, b: int) -> int:
    return a + b

async def main() -> None:
    async with Client(server, protocol_version={version}) as client:
        result = await client.call("add", {{"a": 2, "b": 3}})
        assert result.content[0].text == "5", result

anyio.run(main)
"""


def _loaded_after(code: str) -> list[str]:
    probe = f"import json, sys\n{code}\nprint('LOADED', json.dumps([m for m in {list(LAZY)!r} if m in sys.modules]))\n"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(str(ROOT / p) for p in ("runtime", "generated")),
    }
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("LOADED "))
    loaded: list[str] = json.loads(line.removeprefix("LOADED "))
    return loaded


def test_importing_the_client_loads_no_era_or_feature_module() -> None:
    assert _loaded_after("from mcpbind import Client") == []


def test_a_handshake_era_session_needs_none_of_them() -> None:
    assert _loaded_after(SESSION.format(version="LATEST_HANDSHAKE")) == []


def test_a_stateless_era_session_loads_the_pipeline_only() -> None:
    loaded = _loaded_after(SESSION.format(version="LATEST_STATELESS"))
    assert "mcpbind.client.pipeline" in loaded
    assert not {"mcpbind.client.listen", "mcpbind.client.refresh", "mcpbind.client.tasks"} & set(
        loaded
    )
