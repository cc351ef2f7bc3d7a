"""Tasks on the server (2025-11-25 basic/utilities/tasks.mdx and the 2026-07-28 tasks extension):
``Tasks(server, store)`` installs them; a tool taking a ``TaskContext`` runs as one."""

from __future__ import annotations

from ...tasks.manager import TaskManager
from ...tasks.wire import EXTENSION, RELATED_TASK
from .support import ANONYMOUS, Tasks, default_scope
from .task_context import TaskContext

__all__ = [
    "ANONYMOUS",
    "EXTENSION",
    "RELATED_TASK",
    "TaskContext",
    "TaskManager",
    "Tasks",
    "default_scope",
]
