"""One scripted mock server per module; the official SDK and mcpbind servers per test module
that asks for them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ._support import Running, server


@pytest.fixture(scope="module")
def mock() -> Iterator[Running]:
    with server("mock") as running:
        yield running


@pytest.fixture(scope="module", params=["mock", "official-2026"])
def served(request: pytest.FixtureRequest) -> Iterator[Running]:
    """The 2026-07-28 client tests' surface, recorded: on the scripted mock and on the
    official Python SDK's server (official_2026_server.py), which implements it."""
    with server(request.param) as running:
        yield running


@pytest.fixture
def fresh_mock() -> Iterator[Running]:
    """A mock server of its own, for tests that change its state."""
    with server("mock") as running:
        yield running
