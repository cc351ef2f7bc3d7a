"""Fixtures of the end-to-end auth tests: one oidc-provider for the session (skipped, with
the reason, when ``make tests/auth/oidc/node_modules/.installed`` has not run)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from oidc_support import INSTALLED, Provider, run_provider


@pytest.fixture(scope="session")
def oidc() -> Iterator[Provider]:
    if not INSTALLED.is_dir():
        pytest.skip("oidc-provider not installed: make tests/auth/oidc/node_modules/.installed")
    with run_provider() as provider:
        yield provider
