"""A real ``redis-server`` on 127.0.0.1 for the Redis store tests (Debian package
``redis-server``, installed by .ci/run); the tests skip, saying why, when it is not installed."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["redis_server"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """Start redis-server on a free 127.0.0.1 port; yield its URL; stop it by its PID."""
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.skip(
            "redis-server is not installed (apt-get install redis-server); Redis store not tested"
        )
    try:
        import redis  # noqa: F401
    except ImportError:
        pytest.skip(
            "redis-py is not installed (pip install 'mcpbind[redis]'); Redis store not tested"
        )
    port = _free_port()
    args = [exe, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--dir", str(workdir)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
