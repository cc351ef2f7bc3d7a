"""Protocol versions this runtime speaks, newest first, by era (basic/versioning.mdx).

The handshake era ("legacy" in the 2026-07-28 spec) negotiates once with ``initialize``; the
stateless era ("modern") carries the version in every request's ``_meta``.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ALL_VERSIONS",
    "AUTO",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE",
    "LATEST_STATELESS",
    "STATELESS_VERSIONS",
    "is_stateless",
]

HANDSHAKE_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""The initialize-handshake era, newest first: the client offers the first one."""

LATEST_HANDSHAKE: Final = HANDSHAKE_VERSIONS[0]

STATELESS_VERSIONS: Final = ("2026-07-28",)
"""The stateless era (per-request ``_meta``, ``server/discover``, MRTR), newest first."""

LATEST_STATELESS: Final = STATELESS_VERSIONS[0]

ALL_VERSIONS: Final = STATELESS_VERSIONS + HANDSHAKE_VERSIONS
"""Every version, newest first: what ``server/discover`` advertises by default."""

AUTO: Final = "auto"
"""The client's default: probe ``server/discover``, fall back to ``initialize`` (the era is
the server's choice; application code is the same in both)."""


def is_stateless(version: str | None) -> bool:
    """Whether ``version`` belongs to the stateless era."""
    return version in STATELESS_VERSIONS
