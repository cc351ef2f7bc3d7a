"""Shared fixtures: the anyio backend and the paths of the pinned schemas; the suite's last line
says what it skipped and how to install what is missing (support/skips.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.skips import pytest_terminal_summary

__all__ = ["pytest_terminal_summary"]  # the hook, imported to be registered here

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schema"
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def load_schema(version: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMA_DIR / version / "schema.json").read_text())
    return data
