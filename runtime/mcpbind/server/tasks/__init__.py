"""Tasks on the server (2025-11-25 basic/utilities/tasks.mdx and the 2026-07-28 tasks extension):
``Tasks(server, store)`` installs them; a tool taking a ``TaskContext`` runs as one."""

from typing import TYPE_CHECKING

from ...tasks.manager import TaskManager as TaskManager
from ...tasks.wire import EXTENSION as EXTENSION
from ...tasks.wire import RELATED_TASK as RELATED_TASK
from .support import ANONYMOUS as ANONYMOUS
from .support import Tasks as Tasks
from .support import default_scope as default_scope
from .task_context import TaskContext as TaskContext

if not TYPE_CHECKING:  # ``__all__`` and ``dir()``: the imports above are the list
    from ..._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
