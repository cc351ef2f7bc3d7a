"""Fixtures of the resource-server tests (helpers in ``server_support``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from server_support import Endpoint, Keys


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    served = Endpoint()
    try:
        yield served
    finally:
        served.close()


@pytest.fixture
def keys() -> Keys:
    return Keys()


@pytest.fixture
def jwks(endpoint: Endpoint, keys: Keys) -> Endpoint:
    endpoint.body = keys.jwks
    return endpoint
