"""The receiver's answers to the 2025-11-25 task methods (basic/utilities/tasks.mdx §Protocol
Messages), the same whichever side receives: a server running ``tools/call`` tasks
(``mcpbind.server.tasks``) or a client running ``sampling/createMessage`` and
``elicitation/create`` tasks (:mod:`mcpbind.tasks.receiver`). ``scope`` is whose tasks the
requestor may see (tasks.mdx §Task Isolation and Access Control)."""

from __future__ import annotations

from typing import Any

import msgspec

from ..protocol.cursor import decode_cursor, encode_cursor
from ..protocol.errors import INVALID_PARAMS, McpError
from .manager import TaskManager
from .wire import RELATED_TASK, cancelled_error, task_2025

__all__ = ["cancel_task", "get_task", "list_tasks", "task_id_of", "task_result"]


def task_id_of(params: Any) -> str:
    value = params.get("taskId") if isinstance(params, dict) else getattr(params, "task_id", None)
    if not isinstance(value, str):
        raise McpError(INVALID_PARAMS, "Invalid params: taskId must be a string")
    return value


async def get_task(manager: TaskManager, task_id: str, scope: str) -> dict[str, Any]:
    """``tasks/get`` (§Getting Tasks): the ``Task``; -32602 for an unknown id."""
    return task_2025(await manager.get(task_id, scope))


async def task_result(manager: TaskManager, task_id: str, scope: str) -> dict[str, Any]:
    """``tasks/result`` (§Result Retrieval): blocks until the task is terminal, then returns the
    underlying request's result with the related-task ``_meta``, or raises its error."""
    record = await manager.get(task_id, scope)
    while not record.terminal:
        await manager.wait_change(task_id, record.poll_interval_ms / 1000)
        record = await manager.get(task_id, scope)
    if record.has_error:
        error = msgspec.json.decode(record.error)
        raise McpError(error["code"], error["message"], error.get("data"))
    if not record.has_result:  # cancelled: the same error as the 2026-07-28 task handle's
        raise cancelled_error(task_id)
    value: dict[str, Any] = msgspec.json.decode(record.result)
    value["_meta"] = {**(value.get("_meta") or {}), RELATED_TASK: {"taskId": task_id}}
    return value


async def list_tasks(
    manager: TaskManager, params: Any, scope: str, page_size: int
) -> dict[str, Any]:
    """``tasks/list`` (§Listing Tasks): one page; -32602 for a cursor not minted here."""
    cursor = params.get("cursor") if isinstance(params, dict) else getattr(params, "cursor", None)
    after = decode_cursor(cursor) if isinstance(cursor, str) else 0
    records, nxt = await manager.list(scope, after, page_size)
    result: dict[str, Any] = {"tasks": [task_2025(r) for r in records]}
    if nxt is not None:
        result["nextCursor"] = encode_cursor(nxt)
    return result


async def cancel_task(manager: TaskManager, task_id: str, scope: str) -> dict[str, Any]:
    """``tasks/cancel`` (§Cancelling Tasks): ``cancelled`` before the answer; -32602 for a task
    already terminal."""
    record = await manager.get(task_id, scope)
    if record.terminal:
        raise McpError(
            INVALID_PARAMS, f"Cannot cancel task: already in terminal status '{record.status}'"
        )
    cancelled = await manager.cancel(task_id)
    return task_2025(cancelled or await manager.get(task_id, scope))
