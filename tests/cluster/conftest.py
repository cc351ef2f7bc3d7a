from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tasks.redis_server import redis_server


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on 127.0.0.1 for the module's tests, stopped by its PID."""
    workdir: Path = tmp_path_factory.mktemp("redis")
    with redis_server(workdir) as url:
        yield url
