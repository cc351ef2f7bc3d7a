"""The task stores, each against the same contract (2025-11-25 basic/utilities/tasks.mdx §TTL
and Resource Management, §Task Listing; SEP-2663 §Task Creation: durable before acknowledged).

Memory and SQLite always run; Redis runs against a real ``redis-server`` on 127.0.0.1."""

from __future__ import annotations

import contextlib
import os
import stat
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from mcpbind.tasks import MemoryTaskStore, RedisTaskStore, SqliteTaskStore, TaskStore
from mcpbind.tasks.record import TaskRecord, new_task_id, raw

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskStore]:
    made: TaskStore
    if request.param == "memory":
        made = MemoryTaskStore()
    elif request.param == "sqlite":
        made = SqliteTaskStore(tmp_path / "tasks.db")
    else:
        url = request.getfixturevalue("redis_url")
        made = RedisTaskStore(url, prefix=f"test:{uuid.uuid4().hex}")
    try:
        yield made
    finally:
        await made.close()


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def capped(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskStore]:
    """Each store keeping at most 3 finished tasks per scope and 5 in all."""
    caps = {"max_finished": 5, "max_finished_per_scope": 3}
    made: TaskStore
    if request.param == "memory":
        made = MemoryTaskStore(**caps)
    elif request.param == "sqlite":
        made = SqliteTaskStore(tmp_path / "tasks.db", **caps)
    else:
        url = request.getfixturevalue("redis_url")
        made = RedisTaskStore(url, prefix=f"test:{uuid.uuid4().hex}", **caps)
    try:
        yield made
    finally:
        await made.close()


def _record(scope: str = "alice", ttl_ms: int | None = 60_000) -> TaskRecord:
    return TaskRecord(
        task_id=new_task_id(), scope=scope, method="tools/call", era="2025-11-25", ttl_ms=ttl_ms
    )


async def test_create_then_get_round_trips_every_field(store: TaskStore) -> None:
    rec = _record()
    rec.result = raw({"content": [{"type": "text", "text": "hi"}]})
    rec.input_requests = {"k": raw({"method": "elicitation/create", "params": {}})}
    await store.create(rec)
    got = await store.get(rec.task_id)
    assert got is not None
    assert got.version == 1
    assert (got.task_id, got.scope, got.status, got.ttl_ms) == (
        rec.task_id,
        "alice",
        "working",
        60_000,
    )
    assert bytes(got.result) == b'{"content":[{"type":"text","text":"hi"}]}'
    assert set(got.input_requests) == {"k"}
    assert await store.get("no-such-task") is None


async def test_create_twice_is_refused(store: TaskStore) -> None:
    rec = _record()
    await store.create(rec)
    again = _record()
    again.task_id = rec.task_id
    with pytest.raises(ValueError, match="exists"):
        await store.create(again)


async def test_replace_is_compare_and_set(store: TaskStore) -> None:
    rec = _record()
    await store.create(rec)
    first = await store.get(rec.task_id)
    second = await store.get(rec.task_id)
    assert first is not None and second is not None
    first.status = "completed"
    assert await store.replace(first) is True
    assert first.version == 2
    second.status = "cancelled"
    assert await store.replace(second) is False  # stale: the terminal write stays
    assert second.version == 1
    got = await store.get(rec.task_id)
    assert got is not None and got.status == "completed" and got.version == 2


async def test_ttl_expiry_hides_the_task(store: TaskStore) -> None:
    short = _record(ttl_ms=300)
    forever = _record(ttl_ms=None)
    await store.create(short)
    await store.create(forever)
    assert await store.get(short.task_id) is not None
    deadline = time.monotonic() + 10
    while await store.get(short.task_id) is not None:
        assert time.monotonic() < deadline, "task outlived its ttl"
        await anyio.sleep(0.1)
    assert await store.get(forever.task_id) is not None
    page, _ = await store.list("alice", 0, 10)
    assert [r.task_id for r in page] == [forever.task_id]


async def test_list_pages_in_creation_order_within_a_scope(store: TaskStore) -> None:
    mine = [_record() for _ in range(5)]
    for rec in mine:
        await store.create(rec)
        await store.create(_record(scope="bob"))
    seen: list[str] = []
    after = 0
    pages = 0
    while True:
        page, nxt = await store.list("alice", after, 2)
        seen += [r.task_id for r in page]
        pages += 1
        if nxt is None:
            break
        after = nxt
    assert seen == [r.task_id for r in mine]
    assert pages == 3
    bob, _ = await store.list("bob", 0, 100)
    assert len(bob) == 5 and all(r.scope == "bob" for r in bob)


async def _finish(store: TaskStore, rec: TaskRecord) -> None:
    rec.status = "completed"
    rec.result = raw({"content": [{"type": "text", "text": rec.task_id}]})
    assert await store.replace(rec)


async def _kept(store: TaskStore, records: list[TaskRecord]) -> list[int]:
    return [n for n, r in enumerate(records) if await store.get(r.task_id) is not None]


async def test_finished_tasks_are_capped_per_scope_and_in_all(capped: TaskStore) -> None:
    """Issue 28 F6: finished tasks were never capped (20,000 with a 24 h ttl kept +136 MB).
    Past ``max_finished_per_scope`` (3) or ``max_finished`` (5) the oldest finished tasks
    are deleted; running ones never are, and the order is that of finishing."""
    alice = [_record("alice", ttl_ms=86_400_000) for _ in range(6)]
    for rec in alice:
        await capped.create(rec)
    for n in (1, 0, 2, 3):  # finishing order: 1, 0, 2, 3
        await _finish(capped, alice[n])
    assert await _kept(capped, alice) == [0, 2, 3, 4, 5]  # 1 finished first: gone
    await _finish(capped, alice[4])
    assert await _kept(capped, alice) == [2, 3, 4, 5]  # 5 is running: kept
    listed, _ = await capped.list("alice", 0, 100)
    assert [r.task_id for r in listed] == [alice[n].task_id for n in (2, 3, 4, 5)]
    # Other scopes: 3 more finished make 6 in all, past 5: alice's oldest (2) goes.
    bob = [_record("bob") for _ in range(3)]
    for rec in bob:
        await capped.create(rec)
        await _finish(capped, rec)
    assert await _kept(capped, alice) == [3, 4, 5]
    assert await _kept(capped, bob) == [0, 1, 2]
    # The anonymous scope is nobody's: only the total applies to it.
    anonymous = [_record("", ttl_ms=60_000) for _ in range(4)]
    for rec in anonymous:
        await capped.create(rec)
        await _finish(capped, rec)
    assert await _kept(capped, anonymous) == [0, 1, 2, 3]
    assert await _kept(capped, alice) == [5] and await _kept(capped, bob) == [2]


async def test_sqlite_made_before_the_cap_is_migrated(tmp_path: Path) -> None:
    """A database made by a version without the finishing order gets the column on open;
    tasks finished from then on are capped."""
    import sqlite3

    from mcpbind.tasks import sqlite_store

    path = tmp_path / "old.db"
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.executescript(sqlite_store._SCHEMA)
    store = SqliteTaskStore(path, max_finished=1)
    try:
        records = [_record() for _ in range(2)]
        for rec in records:
            await store.create(rec)
            await _finish(store, rec)
        assert await _kept(store, records) == [1]
    finally:
        await store.close()


async def test_sqlite_survives_reopening(tmp_path: Path) -> None:
    """A record written by one store object (one process) is read by a fresh one."""
    path = tmp_path / "tasks.db"
    first = SqliteTaskStore(path)
    rec = _record()
    await first.create(rec)
    rec.status = "completed"
    rec.result = raw({"content": []})
    assert await first.replace(rec)
    await first.close()
    second = SqliteTaskStore(path)
    try:
        got = await second.get(rec.task_id)
        assert got is not None and got.status == "completed" and got.version == 2
        assert bytes(got.result) == b'{"content":[]}'
    finally:
        await second.close()


async def test_sqlite_files_are_private_to_their_owner(tmp_path: Path) -> None:
    """Issue 28 F9: results sit in the database and its WAL: the file, its -wal and -shm are
    created 0600 and a folder the store creates 0700, whatever the umask allows."""
    path = tmp_path / "state" / "mcp" / "tasks.db"
    previous = os.umask(0o022)
    try:
        store = SqliteTaskStore(path)
        try:
            rec = _record()
            await store.create(rec)
            rec.result = raw({"content": [{"type": "text", "text": "secret"}]})
            assert await store.replace(rec)
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in path.parent.iterdir()}
        finally:
            await store.close()
    finally:
        os.umask(previous)
    assert modes == {"tasks.db": 0o600, "tasks.db-wal": 0o600, "tasks.db-shm": 0o600}
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o700


async def test_redis_keys_all_expire_with_their_tasks(redis_url: str) -> None:
    """Issue 28 F10: the per-scope index expired never, so every session or sessionless
    caller left a key behind for good. It now lives as long as its longest-lived task
    (persistent only while one has no ttl)."""
    import redis.asyncio

    prefix = f"test:{uuid.uuid4().hex}"
    store = RedisTaskStore(redis_url, prefix=prefix)
    probe = redis.asyncio.Redis.from_url(redis_url)
    try:
        index = f"{prefix}:scope:alice"
        await store.create(_record(ttl_ms=60_000))
        assert 0 < await probe.pttl(index) <= 60_000
        await store.create(_record(ttl_ms=120_000))
        assert 60_000 < await probe.pttl(index) <= 120_000
        await store.create(_record(ttl_ms=30_000))  # never shortens it
        assert 60_000 < await probe.pttl(index) <= 120_000
        await store.create(_record(ttl_ms=None))
        assert await probe.pttl(index) == -1  # lives as long as its unlimited task
        short = f"{prefix}:scope:bob"
        await store.create(_record(scope="bob", ttl_ms=100))
        for _ in range(500):  # bounded: Redis expires keys actively within ~100 ms
            if not await probe.exists(short):
                break
            await anyio.sleep(0.01)
        assert not await probe.exists(short)
        carol = _record(scope="carol", ttl_ms=60_000)  # finished: joins the done sets
        await store.create(carol)
        await _finish(store, carol)
        for done in (f"{prefix}:done", f"{prefix}:done:carol"):
            assert 0 < await probe.pttl(done) <= 60_000
        keys = [k.decode() async for k in probe.scan_iter(match=f"{prefix}:*")]
        ttls = {k: await probe.pttl(k) for k in keys}
        # Only alice's unlimited task (and its index) and the ordering counter persist.
        persistent = sorted(k.split(":", 2)[2].split(":")[0] for k, v in ttls.items() if v == -1)
        assert persistent == ["scope", "seq", "task"]
    finally:
        await probe.aclose()
        await store.close()


async def test_two_redis_clients_see_one_store(redis_url: str) -> None:
    prefix = f"test:{uuid.uuid4().hex}"
    a, b = RedisTaskStore(redis_url, prefix=prefix), RedisTaskStore(redis_url, prefix=prefix)
    try:
        rec = _record()
        await a.create(rec)
        got = await b.get(rec.task_id)
        assert got is not None
        got.status = "cancelled"
        assert await b.replace(got)
        stale = await a.get(rec.task_id)
        assert stale is not None and stale.status == "cancelled"
    finally:
        await a.close()
        await b.close()
