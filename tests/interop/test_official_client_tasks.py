"""The official MCP Python SDK's client (``mcp`` 2.3.0, its own task types) drives an mcpbind
task tool over stdio on 2025-11-25 (basic/utilities/tasks.mdx: §Creating Tasks, §Getting
Tasks, §Retrieving Task Results, §Listing Tasks, §Cancelling Tasks, §Input Required Status).

mcp 2.3.0's typed ``send_request`` checks every ``tools/call`` result against
``CallToolResult``, so it cannot receive the ``CreateTaskResult`` of a task-augmented call
(an SDK limitation); that one request goes through its dispatcher's ``send_raw_request``
(a private API of the pinned ``mcp==2.3.0``: ``test_the_private_hook_is_there`` fails when
it moves) and is then validated with the SDK's own ``CreateTaskResult``. Everything else is
the SDK's public API."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip(
    "mcp", reason="the official MCP SDK (`mcp`, the `peers` extra) is not installed"
)

import mcp.types as mt
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

APP = str(Path(__file__).resolve().parents[1] / "tasks" / "task_app.py")


async def _elicit(context: Any, params: Any) -> mt.ElicitResult:
    related = (
        (params.meta or {}).get("io.modelcontextprotocol/related-task") if params.meta else None
    )
    name = "Linus" if related else "no-task"
    return mt.ElicitResult(action="accept", content={"name": name})


async def test_official_client_drives_an_mcpbind_task_tool() -> None:
    server = StdioServerParameters(
        command=sys.executable, args=[APP, "stdio"], env=dict(os.environ)
    )
    async with (
        stdio_client(server) as (read, write),
        ClientSession(read, write, elicitation_callback=_elicit) as session,
    ):
        init = await session.initialize()
        tasks = init.capabilities.tasks
        assert tasks is not None and tasks.requests is not None

        async def start(name: str, arguments: dict[str, Any]) -> mt.CreateTaskResult:
            params = mt.CallToolRequestParams(
                name=name, arguments=arguments, task=mt.TaskMetadata(ttl=60_000)
            ).model_dump(by_alias=True, mode="json", exclude_none=True)
            raw = await session._dispatcher.send_raw_request("tools/call", params, {})
            return mt.CreateTaskResult.model_validate(raw)

        created = await start("slow", {"seconds": 0.2})
        task_id = created.task.task_id
        assert created.task.status == "working" and created.task.ttl == 60_000
        got = await session.send_request(
            mt.GetTaskRequest(params=mt.GetTaskRequestParams(task_id=task_id)), mt.GetTaskResult
        )
        assert got.task_id == task_id
        result = await session.send_request(
            mt.GetTaskPayloadRequest(params=mt.GetTaskPayloadRequestParams(task_id=task_id)),
            mt.CallToolResult,
        )
        assert result.content[0].text == "slept 0.2s"  # type: ignore[union-attr]

        asked = await start("ask", {})
        answered = await session.send_request(
            mt.GetTaskPayloadRequest(
                params=mt.GetTaskPayloadRequestParams(task_id=asked.task.task_id)
            ),
            mt.CallToolResult,
        )
        assert answered.content[0].text == "hello Linus"  # type: ignore[union-attr]

        slow = await start("slow", {"seconds": 60})
        listed = await session.send_request(mt.ListTasksRequest(), mt.ListTasksResult)
        assert {t.task_id for t in listed.tasks} == {task_id, asked.task.task_id, slow.task.task_id}
        cancelled = await session.send_request(
            mt.CancelTaskRequest(params=mt.CancelTaskRequestParams(task_id=slow.task.task_id)),
            mt.CancelTaskResult,
        )
        assert cancelled.status == "cancelled"
        with pytest.raises(MCPError) as info:
            await session.send_request(
                mt.CancelTaskRequest(params=mt.CancelTaskRequestParams(task_id=slow.task.task_id)),
                mt.CancelTaskResult,
            )
        assert info.value.error.code == -32602
        with anyio.fail_after(10):
            plain = await session.call_tool("quick", {"word": "plain"})
        assert plain.content[0].text == "quick plain"  # type: ignore[union-attr]


def test_the_private_hook_is_there() -> None:
    """The one private API used above, on the pinned mcp==2.3.0."""
    import inspect

    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

    assert list(inspect.signature(JSONRPCDispatcher.send_raw_request).parameters)[:4] == [
        "self",
        "method",
        "params",
        "opts",
    ]
