"""A real ``redis-server`` on 127.0.0.1 for the Redis store tests (Debian package
``redis-server``, installed by .ci/run); the tests skip, saying why, when it is not installed."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.live_server import free_port, listening_process

__all__ = ["redis_server"]


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
    port = free_port()
    args = [exe, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--dir", str(workdir)]
    with listening_process(args, port, stdout=subprocess.DEVNULL):
        yield f"redis://127.0.0.1:{port}/0"
