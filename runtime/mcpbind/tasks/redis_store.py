"""``RedisTaskStore``: tasks in Redis, for several server processes behind a load balancer.

Uses redis-py's asyncio client (``pip install mcpbind[redis]``; imported when the store is
made, never by ``import mcpbind``). A task is one key holding its encoded record, expiring with
the task's ``ttl`` (Redis drops it; no sweeper). A per-scope sorted set, scored by a global
counter, orders ``tasks/list``; it expires with its longest-lived task. Compare-and-set is one Lua script, so it is atomic on the
server whichever process writes. Redis acknowledges a write once it is applied; for writes
that must survive a Redis restart, run Redis with ``appendonly yes`` and ``appendfsync always``.
"""

from __future__ import annotations

from typing import Any

from .record import TaskRecord, decode_record, encode_record

__all__ = ["RedisTaskStore"]

# KEYS[1] task key, KEYS[2] scope index, KEYS[3] counter; ARGV body, ttl ms (0: none), task id
# The index lives as long as its longest-lived task (persistent while one has no ttl), so a
# scope (a session, a sessionless caller) leaves no key behind once its tasks expired.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
else
  redis.call('SET', KEYS[1], ARGV[1])
end
local seq = redis.call('INCR', KEYS[3])
local existed = redis.call('EXISTS', KEYS[2])
local left = redis.call('PTTL', KEYS[2])
redis.call('ZADD', KEYS[2], seq, ARGV[3])
if ttl <= 0 then
  redis.call('PERSIST', KEYS[2])
elseif existed == 0 or (left >= 0 and left < ttl) then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return seq
"""

# KEYS[1] task key; ARGV expected version, new body
_REPLACE = """
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
if cjson.decode(current)['version'] ~= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1
"""


class RedisTaskStore:
    """Tasks in the Redis at ``url`` (``redis://host:port/db``), keys under ``prefix``."""

    def __init__(
        self, url: str = "redis://127.0.0.1:6379/0", *, prefix: str = "mcpbind:tasks"
    ) -> None:
        import redis.asyncio

        self._redis: Any = redis.asyncio.Redis.from_url(url)
        self._prefix = prefix
        self._create = self._redis.register_script(_CREATE)
        self._replace = self._redis.register_script(_REPLACE)

    def _key(self, task_id: str) -> str:
        return f"{self._prefix}:task:{task_id}"

    def _index(self, scope: str) -> str:
        return f"{self._prefix}:scope:{scope}"

    async def create(self, record: TaskRecord) -> None:
        record.version = 1
        ttl = record.ttl_ms or 0
        keys = [self._key(record.task_id), self._index(record.scope), f"{self._prefix}:seq"]
        seq = await self._create(keys=keys, args=[encode_record(record), ttl, record.task_id])
        if not seq:
            record.version = 0
            raise ValueError(f"task {record.task_id!r} exists")

    async def get(self, task_id: str) -> TaskRecord | None:
        body = await self._redis.get(self._key(task_id))
        return None if body is None else decode_record(body)

    async def replace(self, record: TaskRecord) -> bool:
        expected = record.version
        record.version = expected + 1
        done = await self._replace(
            keys=[self._key(record.task_id)], args=[expected, encode_record(record)]
        )
        if done:
            return True
        record.version = expected
        return False

    async def list(self, scope: str, after: int, limit: int) -> tuple[list[TaskRecord], int | None]:
        index = self._index(scope)
        records: list[TaskRecord] = []
        position = after
        while len(records) <= limit:
            rows = await self._redis.zrangebyscore(
                index, f"({position}", "+inf", start=0, num=limit + 1, withscores=True
            )
            if not rows:
                break
            bodies = await self._redis.mget([self._key(tid.decode()) for tid, _ in rows])
            gone = []
            for (tid, score), body in zip(rows, bodies, strict=True):
                position = int(score)
                if body is None:
                    gone.append(tid)  # expired: Redis dropped the key, drop its index entry
                    continue
                records.append(decode_record(body))
                if len(records) > limit:
                    break
            if gone:
                await self._redis.zrem(index, *gone)
        if len(records) > limit:
            last = records[limit - 1]
            score = await self._redis.zscore(index, last.task_id)
            return records[:limit], int(score)
        return records, None

    async def close(self) -> None:
        await self._redis.aclose()
