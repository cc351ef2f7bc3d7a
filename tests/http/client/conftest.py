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


@pytest.fixture
def fresh_mock() -> Iterator[Running]:
    """A mock server of its own, for tests that change its state."""
    with server("mock") as running:
        yield running
