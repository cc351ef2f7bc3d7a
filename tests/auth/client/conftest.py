from __future__ import annotations

from collections.abc import Iterator

import pytest
from auth_client_support import AuthWorld


@pytest.fixture
def world() -> Iterator[AuthWorld]:
    world = AuthWorld()
    world.live.start()
    try:
        yield world
    finally:
        world.live.stop()
