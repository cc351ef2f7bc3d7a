"""The interop modules share one connected client per protocol version (module-scoped async
fixtures), which needs a module-scoped anyio backend."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"
