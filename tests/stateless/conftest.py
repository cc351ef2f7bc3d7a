"""Every test taking ``transport`` runs in memory and over stdio unless marked ``memory_only``."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "memory_only: run this test in memory only")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "transport" in metafunc.fixturenames:
        memory_only = metafunc.definition.get_closest_marker("memory_only") is not None
        metafunc.parametrize("transport", ["memory"] if memory_only else ["memory", "stdio"])
