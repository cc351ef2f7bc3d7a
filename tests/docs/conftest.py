"""The built site, once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.site import build


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built as ``make docs`` builds it (``--strict``: any warning fails the build)."""
    site_dir = tmp_path_factory.mktemp("site")
    done = build(site_dir)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-4000:]}"
    return site_dir
