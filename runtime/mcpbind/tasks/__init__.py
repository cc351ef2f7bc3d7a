"""Task stores: where tasks (long-running requests that outlive a connection) are kept.

``MemoryTaskStore`` (default), ``SqliteTaskStore`` (survives a restart), ``RedisTaskStore``
(shared by several server processes). What every receiver shares: ``manager``
(``TaskManager``), ``wire`` (the Task shapes), ``receiving`` (the 2025-11-25 ``tasks/*``
answers); ``receiver``, a client running sampling and elicitation as tasks. The requestor side
(``start_task``, ``TaskHandle``) is ``mcpbind.client.tasks``. The server side of tasks is ``mcpbind.server.tasks``.
"""

from typing import TYPE_CHECKING

from .record import TERMINAL as TERMINAL
from .record import TaskRecord as TaskRecord
from .record import TaskStatus as TaskStatus
from .store import MemoryTaskStore as MemoryTaskStore
from .store import TaskStore as TaskStore

if TYPE_CHECKING:  # the durable stores import sqlite3 / redis only when asked for
    from .redis_store import RedisTaskStore as RedisTaskStore
    from .sqlite_store import SqliteTaskStore as SqliteTaskStore
else:
    from .._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
