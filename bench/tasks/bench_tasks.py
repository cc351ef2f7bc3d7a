"""Task throughput per store (``make bench-tasks``): tasks created, polled and completed per
second, in one process, so the figure is the task machinery and the store, not a transport.

For each store (memory; SQLite on a temporary file, ``synchronous=FULL``; Redis on a
``redis-server`` started on 127.0.0.1 when one is installed) and each era (2025-11-25:
``tools/call`` with ``params.task``, ``tasks/result``; 2026-07-28: the tasks extension,
``tasks/get`` until completed), ``--tasks`` tasks of an instant tool are run with
``--inflight`` at a time, each: create -> poll ``tasks/get`` until terminal -> read the
result. Printed: tasks/s and the p50/p99 of one task's whole life in ms.

The official Python SDK (``mcp`` 2.3.0) has no task support on its server (its extension
hook only), so it cannot run this workload; the table says so instead of a figure.

    python bench/tasks/bench_tasks.py                 # 300 tasks per configuration
    python bench/tasks/bench_tasks.py --tasks 50      # smoke-sized
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mcpbind import Client, Server  # noqa: E402
from mcpbind.client import start_task  # noqa: E402
from mcpbind.server.tasks import TaskContext, Tasks  # noqa: E402
from mcpbind.tasks import MemoryTaskStore, RedisTaskStore, SqliteTaskStore, TaskStore  # noqa: E402
from tests.tasks.redis_server import redis_server  # noqa: E402


def _server(store: TaskStore) -> Server:
    server = Server("bench-tasks")
    Tasks(server, store, poll_interval_ms=1)

    @server.tool(task="optional")
    async def instant(n: int, task: TaskContext) -> int:
        return n

    return server


async def _run(store: TaskStore, era: str, count: int, inflight: int) -> tuple[float, list[float]]:
    lives: list[float] = []
    next_n = iter(range(count))
    async with Client(_server(store), protocol_version=era) as client:

        async def worker() -> None:
            for n in next_n:
                began = time.perf_counter()
                handle = await start_task(client, "instant", {"n": n})
                await handle.wait()
                result = await handle.result()
                assert result.is_error is not True
                lives.append(time.perf_counter() - began)

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(inflight)))
        elapsed = time.perf_counter() - began
    await store.close()
    return count / elapsed, lives


def _row(label: str, era: str, rate: float, lives: list[float]) -> str:
    lives = sorted(lives)
    p50 = statistics.median(lives) * 1000
    p99 = lives[min(len(lives) - 1, int(len(lives) * 0.99))] * 1000
    return f"{label:<10} {era:<11} {rate:>9.0f} {p50:>8.2f} {p99:>8.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description="task throughput per store")
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--inflight", type=int, default=8)
    args = parser.parse_args()
    print(f"{args.tasks} tasks per row, {args.inflight} in flight")
    print(f"{'store':<10} {'era':<11} {'tasks/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        stores: dict[str, Callable[[], TaskStore]] = {
            "memory": MemoryTaskStore,
            "sqlite": lambda: SqliteTaskStore(Path(tmp) / f"{uuid.uuid4().hex}.db"),
        }
        try:
            with redis_server(Path(tmp)) as url:
                stores["redis"] = lambda: RedisTaskStore(url, prefix=f"bench:{uuid.uuid4().hex}")
                _table(stores, args)
        except BaseException as exc:  # pytest.skip inside redis_server when not installed
            if type(exc).__name__ != "Skipped":
                raise
            print(f"redis      (not run: {exc})")
            _table(stores, args)
    print("official-py (mcp 2.3.0): no server-side task support, workload not runnable")


def _table(stores: dict[str, Callable[[], TaskStore]], args: argparse.Namespace) -> None:
    for label, make in stores.items():
        for era in ("2025-11-25", "2026-07-28"):
            rate, lives = asyncio.run(_run(make(), era, args.tasks, args.inflight))
            print(_row(label, era, rate, lives), flush=True)


if __name__ == "__main__":
    main()
