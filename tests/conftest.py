"""Shared fixtures: the anyio backend and the paths of the pinned schemas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schema"
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def load_schema(version: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMA_DIR / version / "schema.json").read_text())
    return data
