"""Tasks on the server (2025-11-25 basic/utilities/tasks.mdx and the 2026-07-28 tasks extension):
``Tasks(server, store)`` installs them; a tool taking a ``TaskContext`` runs as one."""

from __future__ import annotations

from .context import TaskContext
from .manager import TaskManager
from .support import Tasks, default_scope
from .wire import EXTENSION, RELATED_TASK

__all__ = ["EXTENSION", "RELATED_TASK", "TaskContext", "TaskManager", "Tasks", "default_scope"]
