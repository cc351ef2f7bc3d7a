"""Real processes for the cluster tests, each on 127.0.0.1 and stopped by its PID: worker
processes (``worker.py``) and haproxy balancing them round-robin (Debian package ``haproxy``,
installed by .ci/run; the tests skip, saying why, without it)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.live_server import free_port, listening_process, stop_process, wait_listening

__all__ = [
    "RestartableRedis",
    "haproxy",
    "paused",
    "redis_process",
    "worker",
    "worker_process",
    "workers",
]

WORKER = str(Path(__file__).with_name("worker.py"))


@contextmanager
def worker_process(
    tag: str, env: Mapping[str, str] | None = None, options: Mapping[str, Any] | None = None
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """Run ``worker.py TAG`` with ``env`` added to the environment; yield its port and
    process."""
    full = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **(env or {})}
    args = [sys.executable, WORKER, tag, json.dumps(dict(options or {}))]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, env=full)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()
        assert line.startswith("PORT "), f"worker {tag} did not start: {line!r}"
        port = int(line.split()[1])
        wait_listening(port, process)
        yield port, process
    finally:
        stop_process(process)


@contextmanager
def worker(
    tag: str, env: Mapping[str, str] | None = None, options: Mapping[str, Any] | None = None
) -> Iterator[int]:
    """Run ``worker.py TAG`` with ``env`` added to the environment; yield its port."""
    with worker_process(tag, env, options) as (port, _process):
        yield port


@contextmanager
def redis_process(workdir: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A redis-server of its own (to stop or pause in a test): its URL and process."""
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    args = [exe, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--dir", str(workdir)]
    with listening_process(args, port, stdout=subprocess.DEVNULL) as process:
        yield f"redis://127.0.0.1:{port}/0", process


@contextmanager
def paused(process: subprocess.Popen[bytes], seconds: float | None = None) -> Iterator[None]:
    """redis-server stopped (SIGSTOP) for the block, or for ``seconds`` from its start."""
    os.kill(process.pid, signal.SIGSTOP)
    timer = None
    if seconds is not None:
        timer = threading.Timer(seconds, os.kill, (process.pid, signal.SIGCONT))
        timer.start()
    try:
        yield
    finally:
        if timer is not None:
            timer.cancel()
        os.kill(process.pid, signal.SIGCONT)


class RestartableRedis:
    """A redis-server of its own on one port that a test stops and starts again there:
    ``persistent`` keeps its data over a graceful restart (an append-only file, fsynced at each
    write, read back on start), else each start is empty (``--save ""``, as in a cache)."""

    def __init__(self, workdir: Path, persistent: bool) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.skip("redis-server is not installed (apt-get install redis-server)")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.args = [exe, "--bind", "127.0.0.1", "--port", str(self.port), "--save", ""]
        self.args += ["--dir", str(workdir)]
        if persistent:
            self.args += ["--appendonly", "yes", "--appendfsync", "always"]
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(self.args, stdout=subprocess.DEVNULL)
        wait_listening(self.port, self.process)

    def stop(self, sig: signal.Signals) -> None:
        """Send ``sig`` (SIGTERM: a clean shutdown; SIGKILL: a crash) and reap it."""
        assert self.process is not None
        os.kill(self.process.pid, sig)
        self.process.wait(10)

    def __enter__(self) -> RestartableRedis:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            stop_process(self.process)


@contextmanager
def workers(
    count: int, env: Mapping[str, str] | None = None, options: Mapping[str, Any] | None = None
) -> Iterator[list[int]]:
    """``count`` workers tagged ``w0``, ``w1``, ...; yield their ports."""
    with ExitStack() as stack:
        yield [stack.enter_context(worker(f"w{i}", env, options)) for i in range(count)]


_CONFIG = """\
global
    maxconn 256
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    timeout tunnel 60s
    option forwardfor
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response
frontend mcp
    bind 127.0.0.1:{port}
    default_backend workers
backend workers
    balance roundrobin
{servers}
"""


@contextmanager
def haproxy(ports: list[int], workdir: Path) -> Iterator[str]:
    """haproxy on a free port, round-robin over the workers at ``ports`` (each request to the
    next one, ``X-Forwarded-For`` added; a connection a stopped worker refuses is retried on
    another, ``redispatch``); yield the MCP URL through it."""
    exe = shutil.which("haproxy")
    if exe is None:
        pytest.skip("haproxy is not installed (apt-get install haproxy); cluster not tested")
    port = free_port()
    servers = "\n".join(f"    server w{i} 127.0.0.1:{p}" for i, p in enumerate(ports))
    config = workdir / "haproxy.cfg"
    config.write_text(_CONFIG.format(port=port, servers=servers))
    args = [exe, "-db", "-f", str(config)]
    with listening_process(args, port, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
        yield f"http://127.0.0.1:{port}/mcp"
