from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .redis_server import redis_server


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    workdir: Path = tmp_path_factory.mktemp("redis")
    with redis_server(workdir) as url:
        yield url
