"""The soak's client process (``bench/soak/clients.py``) builds every connection pool before
its clients start (issue 16 point 3).

Building an ``httpx2.AsyncClient`` loads the CA store: ~70 ms of blocked event loop, ~200 ms
on a loaded machine. Built by each client as it started, ~35 of them stalled the process
for seconds at the start of the run (the warm-up, where no latency is measured), and a
listener's first ``server/discover``, sent among them, ran out of its 10 s probe deadline:
the soak's ``RequestTimeout: Request server/discover timed out after 10.5s``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx2
import pytest

CLIENTS = Path(__file__).resolve().parents[2] / "bench" / "soak" / "clients.py"


@pytest.fixture
def clients() -> ModuleType:
    spec = importlib.util.spec_from_file_location("soak_clients", CLIENTS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def test_every_pool_is_built_before_any_client_starts(
    clients: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    built: list[float] = []
    started: dict[str, tuple[float, Any]] = {}
    real_pool = clients.pool

    def pool() -> httpx2.AsyncClient:
        built.append(time.monotonic())
        return real_pool()

    def job(kind: str) -> Any:
        async def run(n: int, *rest: Any) -> None:
            # The workload itself is the soak smoke test's business: here only when it
            # starts, and with which pool (the last argument of every kind of client).
            started[f"{kind} {n}"] = (time.monotonic(), rest[-1])

        return run

    monkeypatch.setattr(clients, "pool", pool)
    for kind in ("worker", "listener", "slow_reader", "flooder", "non_reader"):
        monkeypatch.setattr(clients, kind, job(kind))
    args = argparse.Namespace(
        url="http://127.0.0.1:9/mcp",
        first=0,
        count=10,
        start=time.monotonic() + 0.2,
        seconds=0.5,
        warmup=0.1,
        think=1.0,
        grace=5.0,
        out=tmp_path / "out.json",
        hang=False,
    )
    stats = clients.Stats()
    asyncio.run(clients.run(args, stats))
    assert stats.errors == [] and stats.hung == []
    # 10 workers, listeners 2 and 7, slow readers 4 and 9, flooder 3, non-reader 8: each
    # with a pool of its own.
    assert sorted(started) == sorted(
        [f"worker {n}" for n in range(10)]
        + ["listener 2", "listener 7", "slow_reader 4", "slow_reader 9"]
        + ["flooder 3", "non_reader 8"]
    )
    assert max(built) < min(when for when, _ in started.values())
    pools = [http for _, http in started.values()]
    assert all(isinstance(http, httpx2.AsyncClient) for http in pools)
    assert len({id(http) for http in pools}) == len(pools) == len(built)
    assert all(http.is_closed for http in pools)  # closed once the run is over
