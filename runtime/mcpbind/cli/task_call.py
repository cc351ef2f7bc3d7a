"""``mcpbind call`` for tools that run as tasks (2025-11-25 basic/utilities/tasks.mdx; the
2026-07-28 tasks extension): start the task, show each status change on stderr until it
ends, print the result; Ctrl-C cancels the task on the server before exiting.

A tool whose ``execution.taskSupport`` is ``required`` always runs this way; ``--task`` runs
any task-capable tool this way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from mcpbind_types import unified as t

from ..client.tasks import start_task
from ..tasks.wire import EXTENSION
from .output import echo

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["needs_task", "run_as_task"]


def _serves_tasks(client: Client) -> bool:
    caps = client.server_capabilities
    if caps is None:
        return False
    if client.era == "stateless":
        return isinstance(caps.extensions, dict) and EXTENSION in caps.extensions
    return isinstance(caps.tasks, t.ServerCapabilitiesTasks)


async def needs_task(client: Client, tool: str) -> bool:
    """Whether ``tool`` must run as a task (looked up only on servers that offer tasks)."""
    if not _serves_tasks(client):
        return False
    async for item in client.iter_tools():
        if item.name == tool:
            execution = item.execution
            return isinstance(execution, t.ToolExecution) and execution.task_support == "required"
    return False


async def run_as_task(
    client: Client, tool: str, arguments: dict[str, Any] | None, *, show: bool
) -> t.CallToolResult:
    handle = await start_task(client, tool, arguments)
    if handle.task_id is None:  # 2026-07-28: the server answered at once
        return await handle.result()
    try:
        async for state in handle.updates():
            if show:
                message = f": {state.status_message}" if state.status_message else ""
                echo(f"task {handle.task_id} {state.status}{message}", err=True)
        return await handle.result()
    except BaseException:
        # Ctrl-C (the event loop cancels us) or a failure: the task must not run on unseen.
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            state = await handle.status()
            if not state.terminal:
                await handle.cancel()
                echo(f"task {handle.task_id} cancelled", err=True)
        raise
