"""``SqliteTaskStore``: tasks in one SQLite file, for a server that must survive a restart.

The standard library's ``sqlite3`` (no dependency). The file is opened in WAL mode with
``synchronous=FULL``: a write returns only after its transaction reached the disk, so a task
acknowledged to a client (``CreateTaskResult``, a status, a result) is there after a crash. All
database work runs on one dedicated thread that owns the connection, so the event loop never
waits on the disk and the connection is never shared between threads. Several processes may
open the same file (SQLite locks it); compare-and-set on ``version`` keeps their writes apart.
Results and input answers are stored (also in the ``-wal`` file until a checkpoint): a new
database is created readable by its owner only (0600; SQLite gives ``-wal`` and ``-shm`` the
database file's mode), and a missing folder 0700.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from .record import (
    ANONYMOUS,
    DEFAULT_MAX_FINISHED,
    DEFAULT_MAX_FINISHED_PER_SCOPE,
    TaskRecord,
    decode_record,
    encode_record,
)

__all__ = ["SqliteTaskStore"]

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS mcp_tasks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL,
    version INTEGER NOT NULL,
    expires_at REAL,
    body BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS mcp_tasks_scope ON mcp_tasks (scope, seq);
CREATE INDEX IF NOT EXISTS mcp_tasks_expiry ON mcp_tasks (expires_at);
"""

# finished: the order in which tasks reached a terminal status (NULL while active); added to
# a database made before it existed (its finished tasks then count from their next write).
_FINISHED = """
CREATE INDEX IF NOT EXISTS mcp_tasks_finished ON mcp_tasks (finished);
CREATE INDEX IF NOT EXISTS mcp_tasks_scope_finished ON mcp_tasks (scope, finished);
"""

# The finished tasks past a cap, oldest first (LIMIT -1: no limit, OFFSET: those kept).
_EVICT_SCOPE = (
    "DELETE FROM mcp_tasks WHERE seq IN (SELECT seq FROM mcp_tasks WHERE scope = ? "
    "AND finished IS NOT NULL ORDER BY finished DESC LIMIT -1 OFFSET ?)"
)
_EVICT_ALL = (
    "DELETE FROM mcp_tasks WHERE seq IN (SELECT seq FROM mcp_tasks "
    "WHERE finished IS NOT NULL ORDER BY finished DESC LIMIT -1 OFFSET ?)"
)


class SqliteTaskStore:
    """Tasks in the SQLite database at ``path`` (created if missing). ``max_finished`` /
    ``max_finished_per_scope``: finished tasks kept (``None``: no cap; see ``store``)."""

    def __init__(
        self,
        path: str | Path,
        *,
        purge_every: float = 60.0,
        max_finished: int | None = DEFAULT_MAX_FINISHED,
        max_finished_per_scope: int | None = DEFAULT_MAX_FINISHED_PER_SCOPE,
    ) -> None:
        self.path = str(path)
        self.max_finished = max_finished
        self.max_finished_per_scope = max_finished_per_scope
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcpbind-tasks-sqlite")
        self._db: sqlite3.Connection | None = None
        self._purge_every = purge_every
        self._last_purge = 0.0

    # ------------------------------------------------------------------ the db thread
    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            _create_private(self.path)
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(_SCHEMA)
            columns = {row[1] for row in db.execute("PRAGMA table_info(mcp_tasks)")}
            if "finished" not in columns:
                db.execute("ALTER TABLE mcp_tasks ADD COLUMN finished INTEGER")
            db.executescript(_FINISHED)
            self._db = db
        return self._db

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: fn(self._conn()))

    def _maybe_purge(self, db: sqlite3.Connection, now: float) -> None:
        if now - self._last_purge >= self._purge_every:
            self._last_purge = now
            db.execute(
                "DELETE FROM mcp_tasks WHERE expires_at IS NOT NULL AND expires_at <= ?", (now,)
            )

    # ------------------------------------------------------------------ TaskStore
    async def create(self, record: TaskRecord) -> None:
        record.version = 1
        body = encode_record(record)

        def insert(db: sqlite3.Connection) -> None:
            self._maybe_purge(db, time.time())
            db.execute(
                "INSERT INTO mcp_tasks (task_id, scope, version, expires_at, body) VALUES (?,?,?,?,?)",
                (record.task_id, record.scope, 1, record.expires_at(), body),
            )

        try:
            await self._run(insert)
        except sqlite3.IntegrityError:
            record.version = 0
            raise ValueError(f"task {record.task_id!r} exists") from None

    async def get(self, task_id: str) -> TaskRecord | None:
        def select(db: sqlite3.Connection) -> Any:
            return db.execute(
                "SELECT body, expires_at FROM mcp_tasks WHERE task_id = ?", (task_id,)
            ).fetchone()

        row = await self._run(select)
        if row is None or (row[1] is not None and row[1] <= time.time()):
            return None
        return decode_record(row[0])

    async def replace(self, record: TaskRecord) -> bool:
        expected = record.version
        record.version = expected + 1
        body = encode_record(record)
        finished = record.terminal

        def update(db: sqlite3.Connection) -> int:
            # One transaction (one sync to disk) for the write and the evictions it causes.
            db.execute("BEGIN IMMEDIATE")
            try:
                cursor = db.execute(
                    "UPDATE mcp_tasks SET version = ?, expires_at = ?, body = ?, finished = "
                    "CASE WHEN ? THEN COALESCE(finished, "
                    "(SELECT COALESCE(MAX(finished), 0) + 1 FROM mcp_tasks)) END "
                    "WHERE task_id = ? AND version = ?",
                    (expected + 1, record.expires_at(), body, finished, record.task_id, expected),
                )
                changed = cursor.rowcount
                if changed == 1 and finished:
                    self._evict(db, record.scope)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return changed

        if await self._run(update) == 1:
            return True
        record.version = expected
        return False

    def _evict(self, db: sqlite3.Connection, scope: str) -> None:
        if self.max_finished_per_scope is not None and scope != ANONYMOUS:
            db.execute(_EVICT_SCOPE, (scope, self.max_finished_per_scope))
        if self.max_finished is not None:
            db.execute(_EVICT_ALL, (self.max_finished,))

    async def list(self, scope: str, after: int, limit: int) -> tuple[list[TaskRecord], int | None]:
        now = time.time()

        def select(db: sqlite3.Connection) -> list[Any]:
            return db.execute(
                "SELECT seq, body FROM mcp_tasks WHERE scope = ? AND seq > ? "
                "AND (expires_at IS NULL OR expires_at > ?) ORDER BY seq LIMIT ?",
                (scope, after, now, limit + 1),
            ).fetchall()

        rows = await self._run(select)
        page = rows[:limit]
        more = len(rows) > limit
        return [decode_record(body) for _, body in page], (page[-1][0] if more else None)

    async def close(self) -> None:
        def shut(db: sqlite3.Connection) -> None:
            db.close()
            self._db = None

        if self._db is not None:
            await self._run(shut)
        self._pool.shutdown(wait=True)


def _create_private(path: str) -> None:
    """Create the database file (and its missing folders) for its owner alone, before SQLite
    opens it; an existing file keeps the mode its operator gave it."""
    if path == ":memory:" or path.startswith("file:") or not path:
        return
    folder = Path(path).parent
    missing: list[Path] = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for each in reversed(missing):
        with contextlib.suppress(FileExistsError):
            each.mkdir(mode=0o700)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
