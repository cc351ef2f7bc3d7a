"""Task stores: where tasks (long-running requests that outlive a connection) are kept.

``MemoryTaskStore`` (default), ``SqliteTaskStore`` (survives a restart), ``RedisTaskStore``
(shared by several server processes). What every receiver shares: ``manager``
(``TaskManager``), ``wire`` (the Task shapes), ``receiving`` (the 2025-11-25 ``tasks/*``
answers); ``receiver``, a client running sampling and elicitation as tasks. The requestor side
(``start_task``, ``TaskHandle``) is ``mcpbind.client.tasks``. The server side of tasks is ``mcpbind.server.tasks``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .record import TERMINAL, TaskRecord, TaskStatus
from .store import MemoryTaskStore, TaskStore

if TYPE_CHECKING:
    from .redis_store import RedisTaskStore
    from .sqlite_store import SqliteTaskStore

__all__ = [
    "TERMINAL",
    "MemoryTaskStore",
    "RedisTaskStore",
    "SqliteTaskStore",
    "TaskRecord",
    "TaskStatus",
    "TaskStore",
]


def __getattr__(name: str) -> Any:
    # The durable stores import sqlite3 / redis only when asked for.
    if name == "SqliteTaskStore":
        from .sqlite_store import SqliteTaskStore

        return SqliteTaskStore
    if name == "RedisTaskStore":
        from .redis_store import RedisTaskStore

        return RedisTaskStore
    raise AttributeError(name)
