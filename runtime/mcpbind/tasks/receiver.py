"""A client as the receiver of tasks (2025-11-25 basic/utilities/tasks.mdx; the 2026-07-28
extension has no client-side tasks).

A client that declares ``tasks.requests.sampling.createMessage`` and/or
``tasks.requests.elicitation.create`` (§Client Capabilities) answers a task-augmented request
from the server (``params.task``) with a ``CreateTaskResult`` at once, runs its usual handler in
the background, and serves ``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel``
for those tasks (§Task-Augmented Sampling Request). The same :class:`TaskManager` and store as
a server's tasks; every task belongs to the one server of the connection.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from mcpbind_types import unified as t

from ..protocol.errors import INVALID_REQUEST, METHOD_NOT_FOUND, McpError
from ..versions import LATEST_HANDSHAKE
from .answers import cancel_task, get_task, list_tasks, task_id_of, task_result
from .manager import TaskManager
from .store import TaskStore
from .wire import created_2025, task_2025

if TYPE_CHECKING:
    from ..connection import Connection

__all__ = ["TaskReceiver"]

ERA: Final = LATEST_HANDSHAKE
"""The version of every task here: client-side tasks exist only as the core tasks of the
handshake era (the stateless era's tasks extension has none)."""
_SCOPE: Final = ""
"""One connection, one server: every task here is that server's."""


class TaskReceiver:
    """Tasks a client runs for its server. ``methods``: the requests it accepts as tasks
    (``sampling/createMessage``, ``elicitation/create``); ``max_active``: tasks running at
    once (more is -32600: a task's request is answered at once, so no in-flight cap bounds
    them); the other keywords go to :class:`TaskManager` (``default_ttl_ms``, ...)."""

    def __init__(
        self,
        methods: set[str],
        store: TaskStore | None = None,
        *,
        page_size: int = 50,
        max_active: int = 100,
        **options: Any,
    ) -> None:
        self.methods = methods
        self.manager = TaskManager(store, **options)
        self.page_size = page_size
        self.max_active = max_active
        self._active = 0

    def declare(self, caps: t.ClientCapabilities) -> None:
        """Add the ``tasks`` capability (§Client Capabilities) for ``methods``."""
        requests = t.ClientCapabilitiesTasksRequests()
        if "sampling/createMessage" in self.methods:
            requests.sampling = t.ClientCapabilitiesTasksRequestsSampling(create_message={})
        if "elicitation/create" in self.methods:
            requests.elicitation = t.ClientCapabilitiesTasksRequestsElicitation(create={})
        caps.tasks = t.ClientCapabilitiesTasks(list_={}, cancel={}, requests=requests)

    def wants(self, method: str, params: Any) -> bool:
        """A task-augmented request this client declared. One it did not declare is processed
        normally, its ``task`` ignored (§Task Support and Handling)."""
        return method in self.methods and isinstance(getattr(params, "task", None), t.TaskMetadata)

    async def create(
        self, params: Any, work: Callable[[], Awaitable[Any]], connection: Connection
    ) -> dict[str, Any]:
        """Create the task, start ``work`` (the usual handler) in the background; the
        ``CreateTaskResult``. Each status change goes to the server as
        ``notifications/tasks/status`` (§Task Status Notification)."""
        if self._active >= self.max_active:
            # tasks.mdx §Resource Management: a limit on concurrent tasks per requestor.
            raise McpError(
                INVALID_REQUEST, f"Too many running tasks ({self.max_active}); let one finish first"
            )
        ttl = params.task.ttl
        self._active += 1
        try:
            record = await self.manager.create(
                _SCOPE, "", ERA, ttl if isinstance(ttl, int) else None
            )
        except BaseException:
            self._active -= 1
            raise

        async def notify(changed: Any) -> None:
            await connection.notify("notifications/tasks/status", task_2025(changed))

        runner = self.manager.start(record, work, listener=notify)
        runner.add_done_callback(self._release)
        return created_2025(record)

    def _release(self, _: object) -> None:
        self._active -= 1

    async def serve(self, method: str, params: Any) -> Any:
        """Answer one of the server's ``tasks/*`` requests."""
        if method == "tasks/list":
            return await list_tasks(self.manager, params, _SCOPE, self.page_size)
        answer = _ANSWERS.get(method)
        if answer is None:
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")
        return await answer(self.manager, task_id_of(params), _SCOPE)

    async def aclose(self) -> None:
        """Stop the tasks still running (the connection is closing) and close the store."""
        await self.manager.aclose()


_ANSWERS: Final[dict[str, Callable[[TaskManager, str, str], Awaitable[dict[str, Any]]]]] = {
    "tasks/get": get_task,
    "tasks/result": task_result,
    "tasks/cancel": cancel_task,
}
