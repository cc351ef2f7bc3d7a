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


def test_errors_are_reported_by_kind_with_the_first_message(clients: ModuleType) -> None:
    """Issue 30: the soak's report groups its errors by kind (operation, exception type,
    JSON-RPC code, HTTP status) with the first one's message, so a failed run explains
    itself: two 400s of ``echo`` are one kind, a 503 another, a timeout a third."""
    from mcpbind import PeerError, RequestTimeout

    stats = clients.Stats()
    missing = "HTTP 400 Bad Request: Bad Request: Mcp-Session-Id required"
    stats.error("echo", PeerError(-32600, missing))
    stats.error("echo", PeerError(-32600, missing + " (again)"))
    stats.error("echo", PeerError(-32600, "HTTP 503 Service Unavailable: registry"))
    stats.error("flooder", RequestTimeout("tools/call", 30.2))
    kinds = stats.as_json()["kinds"]
    assert kinds == {
        "echo: PeerError -32600 HTTP 400": [2, f"echo: PeerError: [-32600] {missing}"],
        "echo: PeerError -32600 HTTP 503": [
            1,
            "echo: PeerError: [-32600] HTTP 503 Service Unavailable: registry",
        ],
        "flooder: RequestTimeout -32001": [
            1,
            "flooder: RequestTimeout: [-32001] Request tools/call timed out after 30.2s",
        ],
    }
    assert stats.as_json()["errors"] == 4


def test_server_tracebacks_are_told_apart_by_exception(tmp_path: Path) -> None:
    """Each traceback in a worker's log is one error, named by its exception, with the log
    line before it (what the server was doing)."""
    spec = importlib.util.spec_from_file_location("soak_run", CLIENTS.with_name("run.py"))
    assert spec is not None and spec.loader is not None
    run = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = run
    try:
        spec.loader.exec_module(run)
        log = "\n".join(
            [
                "INFO: started",
                "tool count failed",
                "Traceback (most recent call last):",
                '  File "x.py", line 1, in f',
                "    raise TimeoutError",
                "redis.exceptions.TimeoutError: Timeout reading from 127.0.0.1:6379",
                "Task exception was never retrieved",
                "Traceback (most recent call last):",
                '  File "y.py", line 2, in g',
                "KeyError: 'x'",
            ]
        )
        assert run.server_tracebacks("worker 1", log) == [
            (
                "worker 1: redis.exceptions.TimeoutError",
                "tool count failed | redis.exceptions.TimeoutError: Timeout reading from "
                "127.0.0.1:6379",
            ),
            ("worker 1: KeyError", "Task exception was never retrieved | KeyError: 'x'"),
        ]
    finally:
        del sys.modules[spec.name]
