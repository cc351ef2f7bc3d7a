"""Protocol versions this runtime speaks, newest first, by era (basic/versioning.mdx).

The handshake era ("legacy" in the 2026-07-28 spec) negotiates once with ``initialize``; the
stateless era ("modern") carries the version in every request's ``_meta``.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ALL_VERSIONS",
    "AUTO",
    "ERAS",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE",
    "LATEST_STATELESS",
    "STATELESS_VERSIONS",
    "is_stateless",
    "pinned_version",
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


ERAS: Final = {"auto": None, "handshake": LATEST_HANDSHAKE, "stateless": LATEST_STATELESS}
"""The names a user may pin instead of a version: ``auto`` negotiates, an era its newest."""


def pinned_version(value: str | None) -> str | None:
    """A version to pin, as a user writes it: ``auto`` (or absent), an era (``handshake``,
    ``stateless``) or a version this runtime speaks; ``None`` means negotiate. Raises
    ``ValueError`` otherwise."""
    if value is None or value in ALL_VERSIONS:
        return value
    if value in ERAS:
        return ERAS[value]
    choices = ", ".join((*ERAS, *ALL_VERSIONS))
    raise ValueError(f"unknown protocol version {value!r}; one of {choices}")
