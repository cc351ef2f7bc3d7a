"""The client: one isolated session with one server, in either protocol era.

``Client`` (:mod:`.client`) and ``ClientHandlers`` are what most code needs; the requestor side
of tasks (``start_task``, ``TaskHandle``) lives here too. See :class:`Client`.
"""

from __future__ import annotations

from .client import Client, ClientHandlers, UnsupportedVersion
from .subscription import Subscription
from .tasks import TaskHandle, TaskState, start_task

__all__ = [
    "Client",
    "ClientHandlers",
    "Subscription",
    "TaskHandle",
    "TaskState",
    "UnsupportedVersion",
    "start_task",
]
