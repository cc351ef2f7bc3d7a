"""Tasks through a Host: start a tool call as a task (after the approval policy, like any call),
see the tasks still running, cancel one (2025-11-25 basic/utilities/tasks.mdx).

    tasks = HostTasks(host)
    running = await tasks.start("files__reindex", {"path": "/srv"})
    for task in await tasks.refresh(): print(task.name, task.status, task.status_message)
    await tasks.cancel(running.task_id)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..client.tasks import TaskHandle, start_task
from .state import UnknownName
from .telemetry import routing

if TYPE_CHECKING:
    from .host import Host

__all__ = ["HostTask", "HostTasks"]


@dataclass(slots=True)
class HostTask:
    """One task started through the host, with the last status seen."""

    name: str
    """The tool's host name."""
    server: str
    handle: TaskHandle = field(repr=False)
    status: str = "working"
    status_message: str | None = None

    @property
    def task_id(self) -> str:
        return self.handle.task_id or ""

    @property
    def running(self) -> bool:
        return self.status in ("working", "input_required")


class HostTasks:
    """The tasks started through ``host``; ``tasks`` keeps them by task id."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.tasks: dict[str, HostTask] = {}

    async def start(self, name: str, arguments: dict[str, Any] | None = None) -> HostTask:
        """Call the tool ``name`` (a host name) as a task; raises like ``Host.call_tool``
        (``UnknownName``, ``ServerUnavailable``, ``ApprovalDenied``)."""
        with routing("tools/call", name):  # one trace, as Host.call_tool
            entry, client = await self.host.authorize_tool_call(name, arguments)
            handle = await start_task(client, entry.tool.name, arguments)
        task = HostTask(name, entry.server, handle)
        if handle.task_id is None:
            task.status = "completed"
        else:
            self.tasks[handle.task_id] = task
        return task

    async def refresh(self) -> list[HostTask]:
        """Poll every task still running; the tasks that are, after the poll."""
        for task in [t for t in self.tasks.values() if t.running]:
            try:
                state = await task.handle.status()
            except Exception as exc:  # the server went away or forgot it
                task.status, task.status_message = "failed", str(exc) or type(exc).__name__
                continue
            task.status, task.status_message = state.status, state.status_message
        return [t for t in self.tasks.values() if t.running]

    async def cancel(self, task_id: str) -> None:
        """Cancel a task started through this host."""
        task = self.tasks.get(task_id)
        if task is None:
            raise UnknownName("task", task_id, "; see HostTasks.tasks")
        await task.handle.cancel()
        task.status = "cancelled"
