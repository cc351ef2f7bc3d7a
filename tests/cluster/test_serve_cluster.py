"""Running it: ``mcpbind serve --http PORT --workers N`` with ``MCPBIND_REDIS_URL`` in the
environment (an unchanged server script joins a cluster by its environment): the workers
share the port, a handshake-era session works whichever worker each connection reaches,
``/healthz`` and ``/readyz`` answer, and SIGTERM to the parent stops every worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx2 as httpx

from tests.support.live_server import free_port, stop_process, wait_listening

from .wire import HANDSHAKE, SSE, call, open_session

APP = f"{Path(__file__).with_name('app.py')}:build"


def _serve(
    port: int, *args: str, env: dict[str, str], stderr: int = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "mcpbind.cli", "serve", APP, "--http", str(port), *args]
    full = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **env}
    return subprocess.Popen(command, env=full, stderr=stderr)


def _fresh(url: str, method: str = "GET", **kw: object) -> httpx.Response:
    """One request on a connection of its own (the kernel hands each to some worker)."""
    with httpx.Client(timeout=10) as http:
        return http.request(method, url, **kw)  # type: ignore[arg-type]


def test_workers_share_a_port_and_sessions_and_stop_on_sigterm(redis_url: str) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = _serve(port, "--workers", "2", env={"MCPBIND_REDIS_URL": redis_url})
    try:
        wait_listening(port, process)
        assert _fresh(base + "/healthz").status_code == 200
        assert _fresh(base + "/readyz").text.startswith("ready ")
        pids = {_fresh(base + "/healthz").text.split()[1] for _ in range(40)}
        assert len(pids) == 2 and str(process.pid) not in pids  # two workers, not the parent

        with httpx.Client(timeout=10) as http:
            session = open_session(http, base + "/mcp")
        headers = {**SSE, "mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
        for i in range(10):  # each on a new connection: both workers serve the session
            ping = {"jsonrpc": "2.0", "id": i, "method": "ping"}
            assert _fresh(base + "/mcp", "POST", json=ping, headers=headers).status_code == 200
        with httpx.Client(timeout=10) as http:
            _, answer = call(http, base + "/mcp", 1, "add", {"arguments": {"a": 4, "b": 5}})
        assert answer["result"]["structuredContent"] == {"result": 9}
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(10)  # the parent returns once every worker stopped
        finally:
            stop_process(process)
    assert process.returncode == 0
    with httpx.Client(timeout=1) as http:
        try:
            http.get(base + "/healthz")
            raise AssertionError("a worker still listens after SIGTERM")
        except httpx.ConnectError:
            pass


def test_several_workers_without_redis_is_a_usage_error() -> None:
    env = {"MCPBIND_REDIS_URL": ""}
    process = _serve(free_port(), "--workers", "2", env=env, stderr=subprocess.PIPE)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 2
    assert b"needs redis" in err
