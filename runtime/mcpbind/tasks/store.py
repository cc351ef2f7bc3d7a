"""The task store interface and the in-memory store.

Every store offers the same five operations; the manager builds everything else on them.
Writes are compare-and-set on ``TaskRecord.version`` so several processes (SQLite file, Redis)
can drive one task without losing an update: a terminal status stays terminal whoever writes
second. A store returns from a write only once the record is durable for that store (memory:
at once; SQLite: committed to disk; Redis: acknowledged by the server), so a ``CreateTaskResult``
is never sent for a task a later ``tasks/get`` could miss (SEP-2663, Task Creation).
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

import msgspec

from .record import TaskRecord

__all__ = ["MemoryTaskStore", "TaskStore"]


@runtime_checkable
class TaskStore(Protocol):
    """Where tasks live. All methods are coroutines; none blocks the event loop."""

    async def create(self, record: TaskRecord) -> None:
        """Store a new record (``version`` 0 -> 1). Returns once it is durable."""

    async def get(self, task_id: str) -> TaskRecord | None:
        """The record, or ``None`` when unknown or past its ``ttl``."""

    async def replace(self, record: TaskRecord) -> bool:
        """Store ``record`` if the stored version is still ``record.version``; on success the
        record's version is increased. ``False``: someone else wrote first (re-read, retry)."""

    async def list(self, scope: str, after: int, limit: int) -> tuple[list[TaskRecord], int | None]:
        """Up to ``limit`` unexpired records of ``scope`` in creation order, starting after
        position ``after`` (0: the start); the position to continue from, or ``None``."""

    async def close(self) -> None:
        """Release connections; the stored tasks stay."""


class MemoryTaskStore:
    """Tasks in a dict: the default, and what tests use. Lost with the process."""

    def __init__(self) -> None:
        self._records: dict[str, tuple[int, TaskRecord]] = {}
        self._seq = 0

    async def create(self, record: TaskRecord) -> None:
        if record.task_id in self._records:
            raise ValueError(f"task {record.task_id!r} exists")
        self._seq += 1
        record.version = 1
        self._records[record.task_id] = (self._seq, _copy(record))

    async def get(self, task_id: str) -> TaskRecord | None:
        entry = self._records.get(task_id)
        if entry is None:
            return None
        if entry[1].expired():
            del self._records[task_id]
            return None
        return _copy(entry[1])

    async def replace(self, record: TaskRecord) -> bool:
        entry = self._records.get(record.task_id)
        if entry is None or entry[1].version != record.version:
            return False
        record.version += 1
        self._records[record.task_id] = (entry[0], _copy(record))
        return True

    async def list(self, scope: str, after: int, limit: int) -> tuple[list[TaskRecord], int | None]:
        now = time.time()
        for task_id in [k for k, (_, r) in self._records.items() if r.expired(now)]:
            del self._records[task_id]
        rows = sorted(
            (seq, r) for seq, r in self._records.values() if r.scope == scope and seq > after
        )
        page = rows[:limit]
        more = len(rows) > limit
        return [_copy(r) for _, r in page], (page[-1][0] if more and page else None)

    async def close(self) -> None:
        return None


def _copy(record: TaskRecord) -> TaskRecord:
    """Callers mutate what they read: each gets its own copy."""
    copy = msgspec.structs.replace(record)
    copy.input_requests = dict(record.input_requests)
    copy.input_responses = dict(record.input_responses)
    return copy
