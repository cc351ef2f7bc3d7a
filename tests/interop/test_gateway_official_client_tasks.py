"""The official MCP Python SDK's client (``mcp`` 2.3.0, its own task types) drives tasks
through the gateway (issue 33, "tasks passed through"): ``mcpbind host -c servers.json
--serve`` over stdio in front of a real mcpbind task server (tests/tasks/task_app.py, stdio),
on 2025-11-25 (basic/utilities/tasks.mdx §Capabilities, §Creating Tasks, §Getting Tasks,
§Retrieving Task Results, §Input Required Status, §Listing Tasks, §Cancelling Tasks).

As in test_official_client_tasks.py, the SDK's typed ``send_request`` cannot receive the
``CreateTaskResult`` of a task-augmented ``tools/call``, so that one request goes through its
dispatcher's ``send_raw_request`` (that test checks the private hook is there); everything
else is the SDK's public API."""

from __future__ import annotations

import json
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


related_seen: list[Any] = []


async def _elicit(context: Any, params: Any) -> mt.ElicitResult:
    related_seen.append((params.meta or {}).get("io.modelcontextprotocol/related-task"))
    return mt.ElicitResult(action="accept", content={"name": "Grace"})


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "servers.json"
    jobs = {"command": sys.executable, "args": [APP, "stdio"], "approval": "allow"}
    path.write_text(json.dumps({"mcpServers": {"jobs": jobs}}))
    return path


async def test_official_client_drives_tasks_through_the_gateway(tmp_path: Path) -> None:
    env = dict(os.environ)
    gateway = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpbind.cli", "host", "-c", str(_config(tmp_path)), "--serve"],
        env=env,
    )
    async with (
        stdio_client(gateway) as (read, write),
        ClientSession(read, write, elicitation_callback=_elicit) as session,
    ):
        init = await session.initialize()
        tasks = init.capabilities.tasks
        assert tasks is not None and tasks.requests is not None
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        execution = listed["jobs__slow"].execution
        assert execution is not None and execution.task_support == "optional"

        async def start(name: str, arguments: dict[str, Any]) -> mt.CreateTaskResult:
            params = mt.CallToolRequestParams(
                name=name, arguments=arguments, task=mt.TaskMetadata(ttl=60_000)
            ).model_dump(by_alias=True, mode="json", exclude_none=True)
            raw = await session._dispatcher.send_raw_request("tools/call", params, {})
            return mt.CreateTaskResult.model_validate(raw)

        with anyio.fail_after(30):
            created = await start("jobs__slow", {"seconds": 0.2})
            task_id = created.task.task_id
            got = await session.send_request(
                mt.GetTaskRequest(params=mt.GetTaskRequestParams(task_id=task_id)),
                mt.GetTaskResult,
            )
            assert got.task_id == task_id
            # The upstream's task as it answered (a receiver may choose its own ttl, §Task
            # Creation; a 2026-07-28 upstream always does), under the gateway's id.
            assert created.task.status_message == "sleeping"
            assert isinstance(got.ttl, int) and got.ttl == created.task.ttl
            assert got.poll_interval == 50
            result = await session.send_request(
                mt.GetTaskPayloadRequest(params=mt.GetTaskPayloadRequestParams(task_id=task_id)),
                mt.CallToolResult,
            )
            assert result.content[0].text == "slept 0.2s"  # type: ignore[union-attr]
            related = (result.meta or {}).get("io.modelcontextprotocol/related-task")
            assert related == {"taskId": task_id}

            # §Input Required Status: the upstream task's elicitation reaches this client
            # while its tasks/result waits, through the gateway.
            asked = await start("jobs__ask", {})
            answered = await session.send_request(
                mt.GetTaskPayloadRequest(
                    params=mt.GetTaskPayloadRequestParams(task_id=asked.task.task_id)
                ),
                mt.CallToolResult,
            )
            assert answered.content[0].text == "hello Grace"  # type: ignore[union-attr]
            # §Related Task Metadata: the ask names the task by the gateway's id.
            assert related_seen == [{"taskId": asked.task.task_id}]

            slow = await start("jobs__slow", {"seconds": 60})
            tasks_now = await session.send_request(mt.ListTasksRequest(), mt.ListTasksResult)
            assert {t.task_id for t in tasks_now.tasks} == {
                task_id,
                asked.task.task_id,
                slow.task.task_id,
            }
            cancelled = await session.send_request(
                mt.CancelTaskRequest(params=mt.CancelTaskRequestParams(task_id=slow.task.task_id)),
                mt.CancelTaskResult,
            )
            assert cancelled.status == "cancelled"
            with pytest.raises(MCPError) as info:
                await session.send_request(
                    mt.CancelTaskRequest(
                        params=mt.CancelTaskRequestParams(task_id=slow.task.task_id)
                    ),
                    mt.CancelTaskResult,
                )
            assert info.value.error.code == -32602
            plain = await session.call_tool("jobs__quick", {"word": "plain"})
            assert plain.content[0].text == "quick plain"  # type: ignore[union-attr]
