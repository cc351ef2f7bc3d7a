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

from .record import (
    ANONYMOUS,
    DEFAULT_MAX_FINISHED,
    DEFAULT_MAX_FINISHED_PER_SCOPE,
    TaskRecord,
    decode_record,
    encode_record,
)

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

# KEYS[1] task key; ARGV expected version, new body, then (a terminal record) task id, scope,
# per-scope cap and total cap (-1: none; per-scope -1 too for the anonymous scope), key
# prefix. A finished task joins <prefix>:done (member "id scope": task ids hold no space) and
# <prefix>:done:<scope>, scored in finishing order (the shared counter), each set living as
# long as its longest-lived task; past a cap the oldest finished tasks are deleted.
_REPLACE = """
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
if cjson.decode(current)['version'] ~= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
if #ARGV < 3 then return 1 end
local prefix, id, scope = ARGV[7], ARGV[3], ARGV[4]
local all, mine = prefix .. ':done', prefix .. ':done:' .. scope
local member = id .. ' ' .. scope
if redis.call('ZSCORE', all, member) then return 1 end
local order = redis.call('INCR', prefix .. ':seq')
local ttl = redis.call('PTTL', KEYS[1])
local function keep(key, value)
  local existed = redis.call('EXISTS', key)
  local left = redis.call('PTTL', key)
  redis.call('ZADD', key, order, value)
  if ttl < 0 then
    redis.call('PERSIST', key)
  elseif existed == 0 or (left >= 0 and left < ttl) then
    redis.call('PEXPIRE', key, ttl)
  end
end
keep(all, member)
local per_scope, total = tonumber(ARGV[5]), tonumber(ARGV[6])
if per_scope >= 0 then
  keep(mine, id)
  local over = redis.call('ZCARD', mine) - per_scope
  if over > 0 then
    for _, old in ipairs(redis.call('ZRANGE', mine, 0, over - 1)) do
      redis.call('DEL', prefix .. ':task:' .. old)
      redis.call('ZREM', all, old .. ' ' .. scope)
    end
    redis.call('ZREMRANGEBYRANK', mine, 0, over - 1)
  end
end
if total >= 0 then
  local over = redis.call('ZCARD', all) - total
  if over > 0 then
    for _, old in ipairs(redis.call('ZRANGE', all, 0, over - 1)) do
      local cut = string.find(old, ' ', 1, true)
      local old_id, old_scope = string.sub(old, 1, cut - 1), string.sub(old, cut + 1)
      redis.call('DEL', prefix .. ':task:' .. old_id)
      redis.call('ZREM', prefix .. ':done:' .. old_scope, old_id)
    end
    redis.call('ZREMRANGEBYRANK', all, 0, over - 1)
  end
end
return 1
"""


class RedisTaskStore:
    """Tasks in the Redis at ``url`` (``redis://host:port/db``), keys under ``prefix``.
    ``max_finished`` / ``max_finished_per_scope``: finished tasks kept (``None``: no cap; see
    ``store``), over every process sharing the prefix."""

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "mcpbind:tasks",
        max_finished: int | None = DEFAULT_MAX_FINISHED,
        max_finished_per_scope: int | None = DEFAULT_MAX_FINISHED_PER_SCOPE,
    ) -> None:
        import redis.asyncio

        self.max_finished = max_finished
        self.max_finished_per_scope = max_finished_per_scope

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
        args: list[Any] = [expected, encode_record(record)]
        if record.terminal:
            per_scope = self.max_finished_per_scope
            if per_scope is None or record.scope == ANONYMOUS:
                per_scope = -1
            total = -1 if self.max_finished is None else self.max_finished
            args += [record.task_id, record.scope, per_scope, total, self._prefix]
        done = await self._replace(keys=[self._key(record.task_id)], args=args)
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
