"""What a task looks like on the wire, per era.

2025-11-25 (basic/utilities/tasks.mdx §Data Types): ``Task`` with ``ttl`` and ``pollInterval``;
``CreateTaskResult`` nests it under ``task``. 2026-07-28 tasks extension (SEP-2663 §Tasks):
``ttlMs`` and ``pollIntervalMs``; ``CreateTaskResult`` is flat (``Result & Task``, ``resultType:
"task"``) and ``tasks/get`` answers a ``DetailedTask`` that inlines ``inputRequests``, the
``result`` or the ``error``. Built as plain dicts: the shapes differ only in a few keys, and the
inlined result is already-encoded JSON spliced in as is.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from mcpbind_types import unified as t

from ..protocol.errors import McpError
from .record import TaskRecord, iso

__all__ = [
    "EXTENSION",
    "RELATED_TASK",
    "REQUEST_CANCELLED",
    "STATUS_2026",
    "TaskSubscriptionFilter",
    "cancelled_error",
    "created_2025",
    "created_2026",
    "detailed_2026",
    "task_2025",
]

EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The tasks extension's identifier (SEP-2663 §Extension Identifier)."""
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"
"""2025-11-25 §Related Task Metadata: the ``_meta`` key tying a message to its task."""
REQUEST_CANCELLED: Final = -32800
"""The error a cancelled task's result is, on both eras. Neither tasks spec names one
(2025-11-25 §Result Retrieval returns what the underlying request would have returned, and a
cancelled request is not answered; SEP-2663's ``CancelledTask`` carries no error); -32602 is
for an unknown task id and -32603 for the receiver's own failures. -32800 is what the official
Python SDK answers a cancelled request with where an answer is due (LSP's RequestCancelled),
outside the JSON-RPC and MCP ranges (docs/guides/tasks.md)."""


STATUS_2026: Final = "notifications/tasks"
"""SEP-2663 §Task Status Notifications: a task's ``DetailedTask``, to the listen streams that
asked for its id."""


class TaskSubscriptionFilter(t.SubscriptionFilter, kw_only=True):
    """A ``subscriptions/listen`` filter with the tasks extension's ``taskIds`` (SEP-2663
    §Task Status Notifications): the tasks whose ``notifications/tasks`` the client wants."""

    task_ids: list[str] | msgspec.UnsetType = msgspec.field(default=msgspec.UNSET, name="taskIds")


def cancelled_error(task_id: str) -> McpError:
    """What asking for a cancelled task's result raises: 2025-11-25 ``tasks/result`` on the
    receiver, the 2026-07-28 task handle on the requestor."""
    return McpError(REQUEST_CANCELLED, f"Task {task_id} was cancelled before it had a result")


def _common(record: TaskRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": iso(record.created_at),
        "lastUpdatedAt": iso(record.updated_at),
    }
    if record.status_message is not None:
        out["statusMessage"] = record.status_message
    return out


def task_2025(record: TaskRecord) -> dict[str, Any]:
    """A ``Task`` (also the ``tasks/get`` result and the status notification's params)."""
    out = _common(record)
    out["ttl"] = record.ttl_ms
    out["pollInterval"] = record.poll_interval_ms
    return out


def created_2025(record: TaskRecord) -> dict[str, Any]:
    return {"task": task_2025(record)}


def created_2026(record: TaskRecord) -> dict[str, Any]:
    """SEP-2663 §Task Creation: flat, ``resultType: "task"``, no result, error or inputs.

    It also carries a one-line ``content`` (``Result`` is open to extra fields): what a
    host shows the model while the task runs (the 2025-11-25 ``model-immediate-response``
    idea), and what keeps the answer a valid core ``CallToolResult`` for a validator or
    client that does not look at ``resultType`` (the conformance suite checks every
    ``tools/call`` result against that schema)."""
    out = _common(record)
    out["ttlMs"] = record.ttl_ms
    out["pollIntervalMs"] = record.poll_interval_ms
    out["resultType"] = "task"
    text = f"Started task {record.task_id}; its result comes from tasks/get."
    out["content"] = [{"type": "text", "text": text}]
    return out


def detailed_2026(record: TaskRecord) -> dict[str, Any]:
    """SEP-2663 §Task Polling: the status-specific fields inlined."""
    out = _common(record)
    out["ttlMs"] = record.ttl_ms
    out["pollIntervalMs"] = record.poll_interval_ms
    if record.status == "input_required":
        out["inputRequests"] = dict(record.input_requests)
    elif record.status == "completed" and record.has_result:
        out["result"] = record.result
    elif record.status == "failed" and record.has_error:
        out["error"] = record.error
    return out


def error_object(code: int, message: str, data: Any = None) -> msgspec.Raw:
    """A JSON-RPC error object, encoded for the record."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return msgspec.Raw(msgspec.json.encode(error))
