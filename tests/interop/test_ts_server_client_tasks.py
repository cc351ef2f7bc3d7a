"""Client-side tasks between mcpbind and the official TypeScript SDK (1.32, its experimental
task API; installed for the round-trip benchmark in bench/rt/peers/ts), over stdio on
2025-11-25 (basic/utilities/tasks.mdx §Task-Augmented Sampling Request), both ways: a TS
server asks an mcpbind client for sampling as a task (it checks the client's
``tasks.requests.sampling.createMessage``, gets a ``CreateTaskResult``, polls ``tasks/get``,
reads ``tasks/result``), and an mcpbind server (``ctx.sample(..., task=True)``) asks a TS
client that runs the task in its own task store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import pytest

from mcpbind import Client, ClientHandlers
from mcpbind import types as t
from mcpbind.transports.stdio import StdioClientTransport

from ._support import run_node_with_task_app

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCRIPT = HERE / "ts_task_server.mjs"
RECEIVER = HERE / "ts_task_receiver_client.mjs"
SDK = ROOT / "bench/rt/peers/ts/node_modules/@modelcontextprotocol/sdk"

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not SDK.exists() or shutil.which("node") is None,
        reason="the TypeScript SDK peer is not installed: make bench/rt/peers/ts/node_modules",
    ),
]


async def _sample(params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
    prompt = params.messages[0].content
    text = prompt.text if isinstance(prompt, t.TextContent) else ""
    return t.CreateMessageResult(
        content=t.TextContent(text=f"echo: {text}"), model="m", role="assistant"
    )


async def test_typescript_server_samples_through_an_mcpbind_client_task() -> None:
    node = shutil.which("node")
    assert node is not None
    handlers = ClientHandlers(sampling=_sample, tasks=True)
    spawn = StdioClientTransport.spawn(node, [str(SCRIPT)])
    async with Client(spawn, protocol_version="2025-11-25", handlers=handlers) as client:
        with anyio.fail_after(60):
            result = await client.call("delegate", {"prompt": "from ts"})
        block = result.content[0]
        assert isinstance(block, t.TextContent)
        out = json.loads(block.text)
        assert out["types"][0] == "taskCreated" and out["types"][-1] == "result", out
        assert out["text"] == "echo: from ts"
        assert client.task_receiver is not None
        records, _ = await client.task_receiver.manager.list("", 0, 10)
        assert [r.status for r in records] == ["completed"]


def test_mcpbind_server_samples_through_a_typescript_client_task() -> None:
    out = run_node_with_task_app(RECEIVER)
    assert out == {"text": "ts: from mcpbind", "isError": False, "created": 1}
