"""capabilities.declares_any reads each top-level capability as has_capability does (basic/
lifecycle.mdx §Capability Negotiation: a capability is declared by its key; the gateway asks
per 2026-07-28 call whether the client declared sampling or elicitation)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest

from mcpbind.protocol.capabilities import declares_any, has_capability

NAMES = ("sampling", "elicitation")
CASES: list[Mapping[str, Any] | None] = [
    None,
    {},
    {"roots": {}},
    {"sampling": {}},
    {"elicitation": {}},
    {"elicitation": {"url": {}}},
    {"sampling": None},
    {"sampling": False},
    {"sampling": None, "elicitation": {}},
    {"sampling": False, "elicitation": False},
    {"experimental": {"sampling": {}}},
    MappingProxyType({"elicitation": {}}),
    MappingProxyType({}),
]


@pytest.mark.parametrize("caps", CASES)
@pytest.mark.parametrize("names", [NAMES, ("sampling",), ("elicitation",), ()])
def test_declares_any_agrees_with_has_capability(
    caps: Mapping[str, Any] | None, names: tuple[str, ...]
) -> None:
    expected = any(has_capability(caps, (name,)) for name in names)
    assert declares_any(caps, names) is expected


def test_a_non_mapping_declares_nothing() -> None:
    odd: Any = ["sampling"]
    assert declares_any(odd, NAMES) is False
    assert has_capability(odd, ("sampling",)) is False
