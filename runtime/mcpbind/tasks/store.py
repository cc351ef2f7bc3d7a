"""The task store interface and the in-memory store.

Every store offers the same five operations; the manager builds everything else on them.
Writes are compare-and-set on ``TaskRecord.version`` so several processes (SQLite file, Redis)
can drive one task without losing an update: a terminal status stays terminal whoever writes
second. Every store bounds the finished tasks it keeps: ``max_finished_per_scope`` per scope
(not the anonymous one) and ``max_finished`` in all; when a task finishes past a cap, the
oldest finished tasks are deleted (their ttl cut short: tasks.mdx §TTL and Resource
Management lets a receiver override the ttl and delete a task; SEP-2663: ``ttlMs`` may change
and an unknown or purged task is "not found"). Refusing new tasks instead would let results
nobody fetches block all new work for up to a day. Running tasks are never evicted (they
are bounded by ``Tasks``' ``max_active*`` caps). A store returns from a write only once the record is durable for that store (memory:
at once; SQLite: committed to disk; Redis: acknowledged by the server), so a ``CreateTaskResult``
is never sent for a task a later ``tasks/get`` could miss (SEP-2663, Task Creation).
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

import msgspec

from .record import ANONYMOUS, DEFAULT_MAX_FINISHED, DEFAULT_MAX_FINISHED_PER_SCOPE, TaskRecord

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
    """Tasks in a dict: the default, and what tests use. Lost with the process.
    ``max_finished`` / ``max_finished_per_scope``: finished tasks kept (``None``: no cap)."""

    def __init__(
        self,
        *,
        max_finished: int | None = DEFAULT_MAX_FINISHED,
        max_finished_per_scope: int | None = DEFAULT_MAX_FINISHED_PER_SCOPE,
    ) -> None:
        self._records: dict[str, tuple[int, TaskRecord]] = {}
        self._seq = 0
        self.max_finished = max_finished
        self.max_finished_per_scope = max_finished_per_scope
        # Finished tasks in the order they finished: all (id -> scope), and per scope.
        self._finished: dict[str, str] = {}
        self._finished_in: dict[str, dict[str, None]] = {}

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
            self._delete(task_id)
            return None
        return _copy(entry[1])

    async def replace(self, record: TaskRecord) -> bool:
        entry = self._records.get(record.task_id)
        if entry is None or entry[1].version != record.version:
            return False
        record.version += 1
        self._records[record.task_id] = (entry[0], _copy(record))
        if record.terminal and record.task_id not in self._finished:
            self._finish(record.task_id, record.scope)
        return True

    def _finish(self, task_id: str, scope: str) -> None:
        self._finished[task_id] = scope
        cap = self.max_finished_per_scope
        if scope != ANONYMOUS:
            mine = self._finished_in.setdefault(scope, {})
            mine[task_id] = None
            while cap is not None and len(mine) > cap:
                self._delete(next(iter(mine)))
        while self.max_finished is not None and len(self._finished) > self.max_finished:
            self._delete(next(iter(self._finished)))

    def _delete(self, task_id: str) -> None:
        self._records.pop(task_id, None)
        scope = self._finished.pop(task_id, None)
        if scope is not None and (mine := self._finished_in.get(scope)) is not None:
            mine.pop(task_id, None)
            if not mine:
                del self._finished_in[scope]

    async def list(self, scope: str, after: int, limit: int) -> tuple[list[TaskRecord], int | None]:
        now = time.time()
        for task_id in [k for k, (_, r) in self._records.items() if r.expired(now)]:
            self._delete(task_id)
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
