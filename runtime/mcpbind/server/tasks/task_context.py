"""``TaskContext``: the context a task-capable tool receives.

It is a ``Context`` (progress, logging, elicitation, sampling as usual) that also knows its
task, when the call runs as one: ``await task.status("indexing 3/10")`` sets the status
message, ``task.cancelled`` turns true after ``tasks/cancel``, and ``elicit`` / ``sample`` move
the task to ``input_required`` while they wait — on 2025-11-25 by sending the request to the
client with the related-task ``_meta`` (tasks.mdx §Input Required Status), on the 2026-07-28
extension by listing it in the task's ``inputRequests`` until a ``tasks/update`` answers it
(SEP-2663 §Task Update Requests). When the same tool is called without a task (an optional
one, called plainly), the context behaves exactly like a ``Context`` and ``status`` does nothing.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from mcpbind_types._common import MethodInfo, decoder

from ...protocol.errors import INTERNAL_ERROR, REQUEST_TIMEOUT, McpError
from ...runner import current_request_id
from ...tasks.record import ACTIVE, TaskRecord, raw
from ...tasks.wire import RELATED_TASK
from ...versions import era_of
from ..context import Context

if TYPE_CHECKING:
    from ...tasks.manager import TaskManager

__all__ = ["TaskContext"]

_Ask = tuple[MethodInfo[Any, Any], Any, float | None, str | None]
"""What a handler asks for: method, params, timeout, input key."""


class TaskContext(Context):
    """A ``Context`` bound to the task its call runs as (``task_id`` is ``None`` when the
    call runs without one)."""

    task_id: str | None = None
    manager: TaskManager | None = None
    era: str | None = None
    route: Callable[[], int | str | None] = lambda: None
    """The id of a ``tasks/result`` request waiting on this task (2025-11-25): side requests
    travel on its response stream."""
    _asked: int = 0

    @property
    def is_task(self) -> bool:
        return self.task_id is not None

    async def status(self, message: str) -> None:
        """Set the task's ``statusMessage`` (seen by ``tasks/get`` and status notifications)."""
        if self.task_id is not None and self.manager is not None:
            await self.manager.set_status(self.task_id, "working", message)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Progress: a ``notifications/progress`` on 2025-11-25 (the request's token stays
        valid for the task's lifetime); the status message on the 2026-07-28 extension, which
        sends no progress for tasks (SEP-2663 §Task Status Notifications)."""
        if self.task_id is not None and era_of(self.era).tasks_extension:
            text = message or (f"{progress:g}/{total:g}" if total is not None else f"{progress:g}")
            await self.status(text)
            return
        with contextlib.suppress(Exception):  # the client may have gone; the task goes on
            await Context.report_progress(self, progress, total, message)

    def _ask(
        self, method: MethodInfo[Any, Any], params: Any, timeout: float | None, key: str | None
    ) -> Any:
        if self.task_id is None or self.manager is None:
            return super()._ask(method, params, timeout, key)
        ask = self._ask_by_update if era_of(self.era).tasks_extension else self._ask_directly
        return ask(self.manager, self.task_id, (method, params, timeout, key))

    async def _ask_directly(self, manager: TaskManager, task_id: str, request: _Ask) -> Any:
        """2025-11-25: the request goes to the client, tied to the task by ``_meta``."""
        method, params, timeout, key = request
        await manager.set_status(task_id, "input_required", None)
        related = {RELATED_TASK: {"taskId": task_id}}
        if params is not None and hasattr(params, "meta"):
            current = params.meta if isinstance(params.meta, dict) else {}
            params = msgspec.structs.replace(params, meta={**current, **related})
        route = self.route()
        token = current_request_id.set(route)
        try:
            return await super()._ask(method, params, timeout, key)
        finally:
            current_request_id.reset(token)
            await manager.set_status(task_id, "working", None)

    async def _ask_by_update(self, manager: TaskManager, task_id: str, request: _Ask) -> Any:
        """SEP-2663: listed in ``inputRequests`` until ``tasks/update`` brings the answer."""
        method, params, timeout, key = request
        self._asked += 1
        name = key or f"{method.method.replace('/', '-')}-{self._asked}"
        wire: dict[str, Any] = {"method": method.method}
        if params is not None:
            wire["params"] = msgspec.to_builtins(params)

        def put(rec: TaskRecord) -> bool:
            if rec.status not in ACTIVE:
                return False
            rec.input_requests[name] = raw(wire)
            rec.status = "input_required"
            return True

        await manager.mutate(task_id, put)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            record = await manager.store.get(task_id)
            if record is None or record.status not in ACTIVE:
                raise McpError(INTERNAL_ERROR, "the task ended while waiting for input")
            answer = record.input_responses.get(name)
            if answer is not None:
                break
            if deadline is not None and time.monotonic() >= deadline:
                raise McpError(REQUEST_TIMEOUT, f"no answer to {method.method} in time")
            await manager.wait_change(task_id, record.poll_interval_ms / 1000)

        def take(rec: TaskRecord) -> bool:
            rec.input_responses.pop(name, None)
            if not rec.input_requests and rec.status == "input_required":
                rec.status = "working"
            return True

        await manager.mutate(task_id, take)
        try:
            return decoder(method.result_type).decode(answer)
        except msgspec.ValidationError as exc:
            raise McpError(INTERNAL_ERROR, f"invalid answer to {method.method}: {exc}") from None
