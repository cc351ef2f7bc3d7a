"""``TaskManager``: creates tasks, runs their work in the background, moves them through their
states in the store, and answers reads — the same for both protocol eras.

The work of a task runs in an asyncio task owned by the manager, not by the connection that
created it, so it outlives the connection (a client may poll from a new one). Every state
change is a compare-and-set write to the store (basic/utilities/tasks.mdx §Task Status
Lifecycle: terminal states never change), so several processes sharing a SQLite file or a
Redis can create, poll, cancel and complete the same task. A running task's process refreshes
its heartbeat; a reader that finds an active task whose heartbeat stopped (its process died)
marks it ``failed`` instead of leaving it ``working`` forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from ..protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from ..versions import era_of
from .record import ACTIVE, TaskRecord, TaskStatus, new_task_id, raw
from .store import MemoryTaskStore, TaskStore
from .wire import error_object

__all__ = ["TaskManager"]

logger = logging.getLogger("mcpbind.tasks")

Listener = Callable[[TaskRecord], Awaitable[None]]


class TaskManager:
    """Tasks over one store. ``lease``: seconds without a heartbeat after which an active task
    of another process counts as dead (heartbeats are written every ``lease / 3``)."""

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        default_ttl_ms: int | None = 3_600_000,
        max_ttl_ms: int | None = 86_400_000,
        poll_interval_ms: int = 500,
        lease: float = 30.0,
    ) -> None:
        self.store: TaskStore = store if store is not None else MemoryTaskStore()
        self.default_ttl_ms = default_ttl_ms
        self.max_ttl_ms = max_ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.lease = lease
        self.owner = secrets.token_hex(8)
        self._running: dict[str, asyncio.Task[None]] = {}
        self._changed: dict[str, asyncio.Event] = {}
        self._listeners: dict[str, Listener] = {}
        self._heartbeat: asyncio.Task[None] | None = None
        #: Called (on the event loop) after every change a client can see, in this process.
        self.on_change: Callable[[TaskRecord], None] | None = None
        self._flags: dict[str, threading.Event] = {}

    # ------------------------------------------------------------------ lifecycle
    def ttl_for(self, requested: int | None) -> int | None:
        """The ttl granted (tasks.mdx: receivers MAY override; we cap it at ``max_ttl_ms``)."""
        ttl = self.default_ttl_ms if requested is None else requested
        if self.max_ttl_ms is not None and (ttl is None or ttl > self.max_ttl_ms):
            return self.max_ttl_ms
        return ttl

    async def create(
        self, scope: str, method: str, era: str, ttl_ms: int | None = None
    ) -> TaskRecord:
        """A new ``working`` task, durable in the store when this returns."""
        now = time.time()
        record = TaskRecord(
            task_id=new_task_id(),
            scope=scope,
            method=method,
            era=era,
            created_at=now,
            ttl_ms=self.ttl_for(ttl_ms),
            poll_interval_ms=self.poll_interval_ms,
            owner=self.owner,
            heartbeat_at=now,
        )
        await self.store.create(record)
        return record

    def start(
        self,
        record: TaskRecord,
        work: Callable[[], Awaitable[Any]],
        *,
        listener: Listener | None = None,
        context: Any = None,
        cancelled: threading.Event | None = None,
    ) -> asyncio.Task[None]:
        """Run ``work`` in the background; its return value (a result struct or dict) completes
        the task, an ``McpError`` or other exception fails it. ``listener`` hears every status
        change this process makes (status notifications). ``context``: the contextvars the
        work runs in. ``cancelled`` is set when the task is cancelled (a worker thread polls it:
        ``TaskContext.cancelled``). The asyncio task running it."""
        if listener is not None:
            self._listeners[record.task_id] = listener
        self._flags[record.task_id] = cancelled or threading.Event()
        loop = asyncio.get_running_loop()
        runner = loop.create_task(self._run(record, work), context=context)
        self._running[record.task_id] = runner
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = loop.create_task(self._beat())
        return runner

    async def _run(self, record: TaskRecord, work: Callable[[], Awaitable[Any]]) -> None:
        task_id = record.task_id
        try:
            value = await work()
        except asyncio.CancelledError:
            if not self._flags[task_id].is_set():
                # Not tasks/cancel (already recorded) but the receiver shutting down.
                message = "The process running the task stopped before it finished."
                error = error_object(INTERNAL_ERROR, message)
                with contextlib.suppress(Exception):
                    await asyncio.shield(self.finish(task_id, "failed", message, error=error))
            raise
        except McpError as exc:
            await self.finish(
                task_id, "failed", exc.message, error=error_object(exc.code, exc.message, exc.data)
            )
        except Exception as exc:
            logger.exception("task %s failed", task_id)
            message = str(exc) or type(exc).__name__
            await self.finish(
                task_id, "failed", message, error=error_object(INTERNAL_ERROR, message)
            )
        else:
            value = value if type(value) is dict else msgspec.to_builtins(value)
            failed = (
                not era_of(record.era).tasks_extension
                and isinstance(value, dict)
                and value.get("isError") is True
            )
            # 2025-11-25 §Task Execution Errors: a tool result with isError fails the task;
            # SEP-2663 §Task Execution Errors: it completes it (failed is for JSON-RPC errors).
            await self.finish(task_id, "failed" if failed else "completed", None, result=raw(value))
        finally:
            self._running.pop(task_id, None)
            self._listeners.pop(task_id, None)
            self._flags.pop(task_id, None)

    async def finish(
        self,
        task_id: str,
        status: TaskStatus,
        message: str | None,
        *,
        result: msgspec.Raw | None = None,
        error: msgspec.Raw | None = None,
    ) -> TaskRecord | None:
        """Move an active task to a terminal status (a terminal one stays as it is)."""

        def apply(rec: TaskRecord) -> bool:
            if rec.status not in ACTIVE:
                return False
            rec.status = status
            rec.status_message = message
            rec.input_requests = {}
            if result is not None:
                rec.result = result
            if error is not None:
                rec.error = error
            return True

        return await self.mutate(task_id, apply)

    # ------------------------------------------------------------------ writes
    async def mutate(
        self, task_id: str, apply: Callable[[TaskRecord], bool], *, touch: bool = True
    ) -> TaskRecord | None:
        """Read, ``apply`` (False: nothing to write), compare-and-set; retried on a race.
        Returns the stored record, ``None`` when the task is gone or ``apply`` declined.
        ``touch``: the change is one a client sees (``lastUpdatedAt`` moves)."""
        while True:
            record = await self.store.get(task_id)
            if record is None:
                return None
            before = record.status
            if not apply(record):
                return None
            if touch:
                record.updated_at = time.time()
            if await self.store.replace(record):
                self._signal(task_id)
                if touch and self.on_change is not None:
                    self.on_change(record)
                if record.status != before and (listener := self._listeners.get(task_id)):
                    with contextlib.suppress(Exception):
                        await listener(record)
                return record

    def _signal(self, task_id: str) -> None:
        event = self._changed.pop(task_id, None)
        if event is not None:
            event.set()

    async def wait_change(self, task_id: str, timeout: float) -> None:
        """Until this process changes the task, or ``timeout`` (a change made by another
        process is seen on the next read)."""
        event = self._changed.setdefault(task_id, asyncio.Event())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), timeout)

    async def set_status(self, task_id: str, status: TaskStatus, message: str | None) -> None:
        def apply(rec: TaskRecord) -> bool:
            if rec.status not in ACTIVE:
                return False
            rec.status = status
            rec.status_message = message
            return True

        await self.mutate(task_id, apply)

    # ------------------------------------------------------------------ reads
    async def get(self, task_id: str, scope: str) -> TaskRecord:
        """The caller's task, else -32602 — the same for a task of another scope as for an
        unknown one (tasks.mdx §Task Isolation and Access Control)."""
        record = await self.store.get(task_id) if isinstance(task_id, str) else None
        if record is None or record.scope != scope:
            raise McpError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
        return await self._check_alive(record)

    async def _check_alive(self, record: TaskRecord) -> TaskRecord:
        if record.status not in ACTIVE:
            return record
        if record.owner == self.owner:
            if record.task_id in self._running:
                return record
        elif time.time() - record.heartbeat_at < self.lease:
            return record
        failed = await self.finish(
            record.task_id,
            "failed",
            "The server running this task stopped before it finished.",
            error=error_object(INTERNAL_ERROR, "The server running this task stopped"),
        )
        return failed or (await self.store.get(record.task_id)) or record

    async def list(self, scope: str, after: int, limit: int) -> tuple[list[TaskRecord], int | None]:
        records, nxt = await self.store.list(scope, after, limit)
        return [await self._check_alive(r) for r in records], nxt

    # ------------------------------------------------------------------ cancellation
    async def cancel(self, task_id: str) -> TaskRecord | None:
        """Record the cancellation and stop the work if it runs here (elsewhere its process
        sees ``cancel_requested`` on its next heartbeat)."""

        def apply(rec: TaskRecord) -> bool:
            if rec.status not in ACTIVE:
                return False
            rec.status = "cancelled"
            rec.status_message = "The task was cancelled by request."
            rec.cancel_requested = True
            rec.input_requests = {}
            return True

        record = await self.mutate(task_id, apply)
        self._stop(task_id)
        return record

    def _stop(self, task_id: str) -> None:
        runner = self._running.get(task_id)
        if runner is not None:
            self._flags[task_id].set()
            runner.cancel()

    def is_running_here(self, task_id: str) -> bool:
        return task_id in self._running

    async def _beat(self) -> None:
        """Refresh the heartbeat of every task running here; stop those cancelled elsewhere."""
        while self._running:
            await asyncio.sleep(self.lease / 3)
            for task_id in list(self._running):
                now = time.time()

                def apply(rec: TaskRecord, now: float = now) -> bool:
                    rec.heartbeat_at = now
                    return rec.status in ACTIVE

                try:
                    stored = await self.store.get(task_id)
                    if stored is not None and stored.cancel_requested:
                        self._stop(task_id)
                        continue
                    await self.mutate(task_id, apply, touch=False)
                except Exception:
                    logger.exception("heartbeat of task %s failed", task_id)

    async def aclose(self) -> None:
        """Cancel the work running here and close the store."""
        for runner in list(self._running.values()):
            runner.cancel()
        if self._running:
            await asyncio.wait(set(self._running.values()), timeout=5)
        if self._heartbeat is not None:
            self._heartbeat.cancel()
        await self.store.close()
