"""Tasks through the Host (2025-11-25 basic/utilities/tasks.mdx): started after the approval
policy, listed while they run, cancelled by the user."""

from __future__ import annotations

import asyncio

import pytest

from mcpbind import Server
from mcpbind.host import ApprovalDenied, Host
from mcpbind.host.tasks import HostTasks
from mcpbind.server.tasks import TaskContext, Tasks
from tests.host.helpers import recorded

pytestmark = pytest.mark.anyio


def _server() -> Server:
    server = Server("jobs")
    Tasks(server, poll_interval_ms=20)

    @server.tool(task="required")
    async def reindex(path: str, task: TaskContext) -> str:
        await task.status(f"indexing {path}")
        await asyncio.sleep(60)
        return "done"

    @server.tool(task="optional")
    async def quick(task: TaskContext) -> str:
        return "quick"

    return server


async def test_host_lists_running_tasks_and_cancels_one() -> None:
    async def approve(request: object) -> bool:
        return True

    connect, _ = recorded(_server())
    async with Host({"jobs": connect}, approve=approve) as host:
        tasks = HostTasks(host)
        slow = await tasks.start("jobs__reindex", {"path": "/srv"})
        fast = await tasks.start("jobs__quick", {})
        assert (await fast.handle.result()).content[0].text == "quick"  # type: ignore[union-attr]
        for _ in range(100):
            running = await tasks.refresh()
            if running and running[0].status_message:
                break
            await asyncio.sleep(0.02)
        assert [(t.name, t.status, t.status_message) for t in running] == [
            ("jobs__reindex", "working", "indexing /srv")
        ]
        await tasks.cancel(slow.task_id)
        assert await tasks.refresh() == []
        assert (await slow.handle.status()).status == "cancelled"


async def test_host_task_goes_through_the_approval_policy() -> None:
    connect, wire = recorded(_server())
    async with Host({"jobs": connect}) as host:  # no approver: asking means deny
        with pytest.raises(ApprovalDenied):
            await HostTasks(host).start("jobs__reindex", {"path": "/"})
    assert "tools/call" not in wire.methods()
