"""The Host shell's task commands (2025-11-25 basic/utilities/tasks.mdx; the 2026-07-28 tasks
extension), backed by :class:`mcpbind.host.tasks.HostTasks`:

    start NAME [JSON]   run a task-capable tool as a task in the background
    tasks               the tasks started here: id, server, tool, status, status message
    cancel ID           cancel a running task (Tab completes the id)
    result ID           wait for a task's end and show its result

``call`` on a tool whose ``execution.taskSupport`` is ``required`` runs it as a task in the
foreground (:meth:`TaskCommands.call`), showing each status change until it ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio

from mcpbind_types import unified as t

from ..host.tasks import HostTask, HostTasks
from .render import call_result_lines, counted

if TYPE_CHECKING:
    from ..host import Host
    from .host_terminal import Terminal

__all__ = ["TaskCommands", "requires_task"]

#: Seconds to wait for ``tasks/cancel`` when Ctrl-C interrupts a call that runs as a task.
_CANCEL_TIMEOUT = 10.0


def requires_task(host: Host, name: str) -> bool:
    """Whether the tool ``name`` (a host name) must run as a task."""
    entry = host.catalog.tools.get(name)
    execution = entry.tool.execution if entry is not None else None
    return isinstance(execution, t.ToolExecution) and execution.task_support == "required"


class TaskCommands:
    """The task commands of one shell."""

    def __init__(self, host: Host, term: Terminal) -> None:
        self.tasks = HostTasks(host)
        self.term = term

    def ids(self, *, running: bool) -> Sequence[str]:
        """Task ids to complete: the running ones (``cancel``) or all (``result``)."""
        return sorted(i for i, task in self.tasks.tasks.items() if task.running or not running)

    async def start(self, name: str, arguments: dict[str, Any] | None) -> t.CallToolResult | None:
        """Start ``name`` as a task and return (2026-07-28: the server may answer at once:
        then its result, shown here, is returned)."""
        task = await self._start(name, arguments)
        if task.task_id:
            return None
        self.term.say(f"{name} ran without a task:")
        result = await task.handle.result()
        for line in call_result_lines(result):
            self.term.say(line)
        return result

    async def _start(self, name: str, arguments: dict[str, Any] | None) -> HostTask:
        task = await self.tasks.start(name, arguments)
        if task.task_id:
            self.term.say(f"task {task.task_id} started ({task.server}, {name}); see tasks")
        return task

    async def call(self, name: str, arguments: dict[str, Any] | None) -> t.CallToolResult:
        """Run ``name`` as a task, showing its status changes; its result."""
        task = await self._start(name, arguments)
        try:
            if task.task_id:
                async for state in task.handle.updates():
                    task.status, task.status_message = state.status, state.status_message
                    self.term.say(f"task {task.task_id} {_status(task)}")
            return await task.handle.result()
        except anyio.get_cancelled_exc_class():  # Ctrl-C: the task is cancelled too
            if task.task_id and task.running:
                with anyio.move_on_after(_CANCEL_TIMEOUT, shield=True):
                    await self.cancel(task.task_id)
            raise

    async def show(self) -> None:
        await self.tasks.refresh()
        everything = list(self.tasks.tasks.values())
        running = sum(1 for task in everything if task.running)
        self.term.say(f"{counted(len(everything), 'task')} ({running} running):")
        for task in everything:
            self.term.say(f"  {task.task_id}  {task.server}  {task.name}  {_status(task)}")

    async def cancel(self, task_id: str) -> None:
        task = self._task(task_id)
        if not task.running:
            raise ValueError(f"task {task.task_id} is already {task.status}")
        await self.tasks.cancel(task.task_id)
        state = await task.handle.status()  # what the server now says
        task.status, task.status_message = state.status, state.status_message
        self.term.say(f"task {task.task_id} {_status(task)}")

    async def result(self, task_id: str) -> t.CallToolResult:
        task = self._task(task_id)
        result = await task.handle.result()
        await self.tasks.refresh()
        for line in call_result_lines(result):
            self.term.say(line)
        return result

    def _task(self, task_id: str) -> HostTask:
        task = self.tasks.tasks.get(task_id.strip())
        if task is None:
            raise ValueError(f"no task {task_id.strip()!r} was started here; see tasks")
        return task


def _status(task: HostTask) -> str:
    return task.status + (f": {task.status_message}" if task.status_message else "")
