"""The ``connect`` fixture: a Client to one of ``servers.py``'s servers, in memory or over stdio.

Every test that uses ``connect`` runs twice (``transport`` = ``memory`` and ``stdio``) unless
it is marked ``memory_only``: stdio runs are kept to the pages where the transport matters
(lifecycle, ping, cancellation, progress, timeouts, notifications, server-to-client requests)
plus a representative subset of the rest, so the directory stays well under a minute.

These pages are the handshake era's (2025-11-25): the fixture pins ``LATEST_HANDSHAKE`` unless
a test passes ``protocol_version`` itself, since ``Client``'s default (``"auto"``) would pick
2026-07-28 against these servers, which speak both eras (tests/stateless covers that one).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest

from mcpbind import LATEST_HANDSHAKE, Client

from .helpers import spawn
from .servers import build

Connect = Callable[..., AbstractAsyncContextManager[Client]]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "memory_only: run this spec test in memory only (stdio adds nothing)"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "transport" in metafunc.fixturenames:
        memory_only = metafunc.definition.get_closest_marker("memory_only") is not None
        metafunc.parametrize("transport", ["memory"] if memory_only else ["memory", "stdio"])


@pytest.fixture
def connect(transport: str) -> Connect:
    """``async with connect("full", handlers=...) as client``: ``Client`` keywords pass through."""

    @asynccontextmanager
    async def open_client(server: str = "full", **options: Any) -> AsyncIterator[Client]:
        options.setdefault("protocol_version", LATEST_HANDSHAKE)
        if transport == "memory":
            async with Client(build(server), **options) as client:
                yield client
        else:
            async with spawn(server) as stdio, Client(stdio, **options) as client:
                yield client

    return open_client
