"""Task stores: where tasks (long-running requests that outlive a connection) are kept.

``MemoryTaskStore`` (default), ``SqliteTaskStore`` (survives a restart), ``RedisTaskStore``
(shared by several server processes); ``start_task`` and ``TaskHandle``, the requestor side.
What every receiver shares: ``manager`` (``TaskManager``), ``wire`` (the Task shapes),
``receiving`` (the 2025-11-25 ``tasks/*`` answers); ``receiver``, a client running sampling
and elicitation as tasks. The server side of tasks is ``mcpbind.server.tasks``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .record import TERMINAL, TaskRecord, TaskStatus
from .store import MemoryTaskStore, TaskStore

if TYPE_CHECKING:
    from .handle import TaskHandle, TaskState, start_task
    from .redis_store import RedisTaskStore
    from .sqlite_store import SqliteTaskStore

__all__ = [
    "TERMINAL",
    "MemoryTaskStore",
    "RedisTaskStore",
    "SqliteTaskStore",
    "TaskRecord",
    "TaskStatus",
    "TaskHandle",
    "TaskState",
    "TaskStore",
    "start_task",
]


def __getattr__(name: str) -> Any:
    # The durable stores import sqlite3 / redis only when asked for.
    if name == "SqliteTaskStore":
        from .sqlite_store import SqliteTaskStore

        return SqliteTaskStore
    if name == "RedisTaskStore":
        from .redis_store import RedisTaskStore

        return RedisTaskStore
    if name in ("TaskHandle", "TaskState", "start_task"):
        from . import handle

        return getattr(handle, name)
    raise AttributeError(name)
